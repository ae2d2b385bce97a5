// The lifecycle rules (document 2 "Lifecycle rules"; document 1 "Account states", the lifecycle
// endpoints and Limits "Lifecycle job"): the worker task lifecycle.users under its lease, each rule
// with its action and audit, dormancy reported once, scheduled deactivation through the API, the
// preview, batches of 100 per rule and realm, and a failing realm or account that stops no other.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker } from '../../../src/main/worker/worker.ts';
import type { RealmRow } from '../../../src/realms/index.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { audits, rows, userRow } from '../../harness/signin-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read member by member
type Body = any;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TEN_MINUTES = 600_000;

async function setup(t: TestContext) {
  const h = await startHarness(t);
  // The tests of this file share a database: realms of earlier tests are suspended, so counts of a
  // run are those of this test's realms (the task visits active realms only).
  await h.ctx.db.query(`update realms set state = 'suspended' where state = 'active'`);
  const worker = startWorker(h.ctx, { autostart: false });
  t.after(() => worker.stop());
  const task = TASKS.find((x) => x.name === 'lifecycle.users');
  assert.ok(task, 'the task is registered as lifecycle.users');
  assert.equal(task.intervalMs, TEN_MINUTES);
  assert.notEqual(task.lease, false, 'one worker of the deployment runs it, under a lease');
  /** One run as the scheduler makes it, then the clock moves past the lease. */
  const run = async () => {
    const report = await worker.scheduler.runOnce(task);
    h.clock.advance(TEN_MINUTES);
    assert.ok(report, 'the run took the lease and did not fail');
    return report;
  };
  /** A run while another worker holds the task's lease: it must not run. */
  const runWhileLeasedElsewhere = async () => {
    await h.ctx.db.query(
      `insert into worker_leases (name, holder, locked_until) values ('lifecycle.users', 'other-worker', $1)
       on conflict (name) do update set holder = excluded.holder, locked_until = excluded.locked_until`,
      [new Date(h.clock.now().getTime() + TEN_MINUTES)],
    );
    return worker.scheduler.runOnce(task);
  };
  return { h, run, runWhileLeasedElsewhere };
}

/** An account whose last activity (creation, or sign-in when given) lies `ageMs` in the past. */
async function account(
  h: Harness,
  realm: RealmRow,
  opts: { ageMs: number; state?: string; guest?: boolean; protect?: boolean; signedIn?: boolean },
) {
  const u = await h.createUser(realm, {
    email: `u${Math.random().toString(36).slice(2, 10)}@example.com`,
  });
  const at = new Date(h.clock.now().getTime() - opts.ageMs);
  await h.ctx.db.query(
    `update users set created_at = $3, last_login_at = $4, state = $5, is_guest = $6, protected = $7
      where realm_id = $1 and id = $2`,
    [
      realm.id,
      u.id,
      at,
      opts.signedIn ? at : null,
      opts.state ?? 'active',
      opts.guest ?? false,
      opts.protect ?? false,
    ],
  );
  return u.id;
}

/** Runs `body` (PL/pgSQL) whenever the account's row is about to change: a fault or a race. */
async function onUpdateOf(t: TestContext, h: Harness, userId: string, name: string, body: string) {
  await h.ctx.db.query(`create function ${name}() returns trigger language plpgsql as $$
    begin ${body} end $$`);
  await h.ctx.db.query(`create trigger ${name} before update on users for each row
    when (old.id = '${userId}') execute function ${name}()`);
  t.after(async () => {
    await h.ctx.db.query(`drop trigger if exists ${name} on users`);
  });
}

const stateOf = async (h: Harness, realm: RealmRow, id: string) => (await userRow(h, realm, id)).state;

describe('users › lifecycle rules', () => {
  test('case=each rule acts on what it selects, as actor system, and the preview shows it first', async (t) => {
    const { h, run } = await setup(t);
    const realm = await h.createRealm();
    await h.setPolicy(realm, {
      lifecycle: { unverified_account_ttl_hours: 72, guest_ttl_days: 5, dormant_days: 30 },
    });
    const admin = await apiCaller(h, realm);
    const pending = await account(h, realm, { ageMs: 73 * HOUR, state: 'pending_verification' });
    const freshPending = await account(h, realm, { ageMs: 69 * HOUR, state: 'pending_verification' });
    const guest = await account(h, realm, { ageMs: 6 * DAY, guest: true, signedIn: true });
    const dormant = await account(h, realm, { ageMs: 31 * DAY, signedIn: true });
    const neverSignedIn = await account(h, realm, { ageMs: 31 * DAY });
    const protectedOld = await account(h, realm, { ageMs: 90 * DAY, protect: true });
    const suspendedOld = await account(h, realm, { ageMs: 90 * DAY, state: 'suspended' });
    const recent = await account(h, realm, { ageMs: 29 * DAY, signedIn: true });
    const leaving = await account(h, realm, { ageMs: 0, signedIn: true });

    const at = new Date(h.clock.now().getTime() + HOUR).toISOString();
    const put = await admin.call('PUT', `/users/${leaving}/scheduled-deactivation`, {
      at,
      reason: 'contract ends',
    });
    assert.equal(put.status, 200);
    assert.deepEqual(await put.json(), { user_id: leaving, at, reason: 'contract ends' });
    const shown: Body = await (await admin.call('GET', `/users/${leaving}`)).json();
    assert.deepEqual(shown.scheduled_deactivation, { at, reason: 'contract ends' });

    const preview: Body = await (await admin.call('GET', '/lifecycle/preview')).json();
    assert.equal(preview.dry_run, true);
    assert.equal(preview.batch_size, 100);
    const byName = Object.fromEntries(preview.rules.map((r: Body) => [r.name, r]));
    assert.deepEqual(Object.keys(byName), [
      'unverified_expired',
      'dormant',
      'guest_expired',
      'scheduled_deactivation',
    ]);
    assert.deepEqual(byName.unverified_expired, {
      name: 'unverified_expired',
      action: 'delete',
      due: 1,
      sample_user_ids: [pending],
    });
    assert.deepEqual(byName.dormant.sample_user_ids, [dormant, neverSignedIn].sort());
    assert.deepEqual([byName.dormant.action, byName.dormant.due], ['report', 2]);
    assert.deepEqual(byName.guest_expired.sample_user_ids, [guest]);
    assert.deepEqual(
      [byName.scheduled_deactivation.action, byName.scheduled_deactivation.due],
      ['suspend', 0],
    );
    assert.equal(await stateOf(h, realm, pending), 'pending_verification', 'the preview changes nothing');

    h.clock.advance(2 * HOUR);
    const report = await run();
    assert.deepEqual(
      [
        report.erased,
        report.dormant_reported,
        report.suspended,
        report.failed_accounts,
        report.failed_realms,
      ],
      [2, 2, 1, 0, 0],
    );
    assert.equal(await stateOf(h, realm, pending), 'deleted');
    assert.equal(await stateOf(h, realm, guest), 'deleted');
    assert.equal(await stateOf(h, realm, freshPending), 'pending_verification');
    for (const id of [dormant, neverSignedIn, protectedOld, recent])
      assert.equal(await stateOf(h, realm, id), 'active', `${id} stays active under report`);
    assert.equal(await stateOf(h, realm, suspendedOld), 'suspended');
    const left = await userRow(h, realm, leaving);
    assert.deepEqual([left.state, left.deactivate_at, left.deactivation_reason], ['suspended', null, null]);

    const deleted = await audits(h, realm, 'user.deleted');
    assert.deepEqual(deleted.map((a) => a.reason).sort(), [
      'guest_expired',
      'unverified_registration_expired',
    ]);
    const detected = await audits(h, realm, 'user.dormant_detected');
    assert.deepEqual(detected.map((a) => a.subject_id).sort(), [dormant, neverSignedIn].sort());
    const suspended = await audits(h, realm, 'user.suspended');
    assert.deepEqual(
      suspended.map((a) => [a.subject_id, a.reason]),
      [[leaving, 'scheduled_deactivation']],
    );
    for (const a of [...deleted, ...detected, ...suspended]) {
      assert.deepEqual([a.actor_type, a.actor_id], ['system', null]);
      assert.match(String(a.correlation_id), /^run_/, 'correlated with the worker run');
    }
    const events = await rows(h, 'select event_type, data from outbox where realm_id = $1 order by id', [
      realm.id,
    ]);
    const suspendedEvent = events.find((e) => e.event_type === 'user.suspended');
    assert.deepEqual(suspendedEvent?.data, { user_id: leaving, state: 'suspended' });
    assert.equal(events.filter((e) => e.event_type === 'user.deleted').length, 2);
    assert.ok(!events.some((e) => String(e.event_type).includes('dormant')), 'dormancy is audit only');

    // Dormancy is reported once: the next run finds nothing new.
    const again = await run();
    assert.deepEqual([again.dormant_reported, again.erased, again.suspended], [0, 0, 0]);
    assert.equal((await audits(h, realm, 'user.dormant_detected')).length, 2);
  });

  test('case=a dormancy after a new sign-in is a new one; suspend suspends with reason dormant', async (t) => {
    const { h, run } = await setup(t);
    const realm = await h.createRealm();
    await h.setPolicy(realm, { lifecycle: { dormant_days: 30 } });
    const dormant = await account(h, realm, { ageMs: 40 * DAY, signedIn: true });
    assert.equal((await run()).dormant_reported, 1);

    // The person signs in again, then stays away another 31 days.
    await h.ctx.db.query('update users set last_login_at = $3 where realm_id = $1 and id = $2', [
      realm.id,
      dormant,
      h.clock.now(),
    ]);
    await h.setPolicy(realm, { lifecycle: { dormant_days: 30, dormant_action: 'suspend' } });
    assert.equal((await run()).suspended, 0, 'a recent sign-in is not dormant');
    h.clock.advance(31 * DAY);
    const report = await run();
    assert.deepEqual([report.suspended, report.dormant_reported], [1, 0]);
    assert.equal(await stateOf(h, realm, dormant), 'suspended');
    assert.equal((await audits(h, realm, 'user.dormant_detected')).length, 2, 'one per dormancy');
    const suspended = await audits(h, realm, 'user.suspended');
    assert.deepEqual(
      suspended.map((a) => [a.subject_id, a.reason, a.actor_type]),
      [[dormant, 'dormant', 'system']],
    );

    // An administrator reactivates it: the same dormancy does not suspend it again.
    const admin = await apiCaller(h, realm);
    const reactivated = await admin.call('POST', `/users/${dormant}/reactivate`, { reason: 'back' });
    assert.equal(reactivated.status, 200);
    assert.equal((await run()).suspended, 0);
    assert.equal(await stateOf(h, realm, dormant), 'active');

    // dormant_days 0 turns the rule off.
    await h.setPolicy(realm, { lifecycle: { dormant_days: 0 } });
    const other = await account(h, realm, { ageMs: 400 * DAY, signedIn: true });
    assert.equal((await run()).dormant_reported, 0);
    assert.equal((await userRow(h, realm, other)).dormant_flagged_at, null);
  });

  test('case=a failing realm and a failing account stop no other realm or account', async (t) => {
    const { h, run } = await setup(t);
    // Realms are visited in id order; the broken ones come first.
    const broken = await h.createRealm();
    const faulty = await h.createRealm();
    const healthy = await h.createRealm();
    for (const r of [broken, faulty, healthy])
      await h.setPolicy(r, { lifecycle: { unverified_account_ttl_hours: 1 } });
    const inBroken = await account(h, broken, { ageMs: 2 * HOUR, state: 'pending_verification' });
    const poisoned = await account(h, faulty, { ageMs: 2 * HOUR, state: 'pending_verification' });
    const inFaulty = await account(h, faulty, { ageMs: 2 * HOUR, state: 'pending_verification' });
    const inHealthy = await account(h, healthy, { ageMs: 2 * HOUR, state: 'pending_verification' });

    // Realm fault: its current policy cannot be read. Account fault: its row refuses every change.
    await h.ctx.db.query('update realms set policy_revision = policy_revision + 1000 where id = $1', [
      broken.id,
    ]);
    await onUpdateOf(t, h, poisoned, 'lifecycle_test_fault', "raise exception 'injected fault';");

    const report = await run();
    assert.deepEqual([report.failed_realms, report.failed_accounts, report.erased], [1, 1, 2]);
    assert.equal(await stateOf(h, broken, inBroken), 'pending_verification');
    assert.equal(await stateOf(h, faulty, poisoned), 'pending_verification');
    assert.equal(await stateOf(h, faulty, inFaulty), 'deleted');
    assert.equal(await stateOf(h, healthy, inHealthy), 'deleted');
    // The failed account's transaction left nothing behind: no audit, no event, its identifier kept.
    const evidence = await rows(
      h,
      `select 1 from audit_events where realm_id = $1 and subject_id = $2 and type = 'user.deleted'
       union all select 1 from outbox where realm_id = $1 and event_type = 'user.deleted'
         and data->>'user_id' = $2`,
      [faulty.id, poisoned],
    );
    assert.deepEqual(evidence, []);
    const identifiers = await rows(h, 'select 1 from user_identifiers where realm_id = $1 and user_id = $2', [
      faulty.id,
      poisoned,
    ]);
    assert.equal(identifiers.length, 1);

    // Repaired, the next run catches up.
    await h.ctx.db.query('drop trigger lifecycle_test_fault on users');
    await h.ctx.db.query('update realms set policy_revision = policy_revision - 1000 where id = $1', [
      broken.id,
    ]);
    const next = await run();
    assert.deepEqual([next.failed_realms, next.failed_accounts, next.erased], [0, 0, 2]);
  });

  test('case=a run takes 100 accounts per rule and realm, and none while another worker leases the task', async (t) => {
    const { h, run, runWhileLeasedElsewhere } = await setup(t);
    const realm = await h.createRealm();
    await h.setPolicy(realm, { lifecycle: { unverified_account_ttl_hours: 1 } });
    const created = new Date(h.clock.now().getTime() - 2 * HOUR);
    await h.ctx.db.query(
      `insert into users (realm_id, id, state, created_via, created_at, updated_at)
       select $1, 'usr_' || lpad(g::text, 26, '0'), 'pending_verification', 'test', $2, $2
         from generate_series(1, 105) g`,
      [realm.id, created],
    );
    assert.equal(await runWhileLeasedElsewhere(), null);
    h.clock.advance(TEN_MINUTES);
    assert.equal((await run()).erased, 100);
    const left = await rows(
      h,
      `select id from users where realm_id = $1 and state = 'pending_verification'`,
      [realm.id],
    );
    assert.equal(left.length, 5);
    assert.equal((await run()).erased, 5);
  });

  test('case=an account that stopped being due after the selection is re-checked and left alone', async (t) => {
    const { h, run } = await setup(t);
    const realm = await h.createRealm();
    await h.setPolicy(realm, { lifecycle: { unverified_account_ttl_hours: 1 } });
    const first = await account(h, realm, { ageMs: 2 * HOUR, state: 'pending_verification' });
    const second = await account(h, realm, { ageMs: 2 * HOUR, state: 'pending_verification' });
    // While the run erases the first account, the second one verifies its address (it turns active):
    // the selection named it, the re-check under its lock no longer does.
    await onUpdateOf(
      t,
      h,
      first,
      'lifecycle_test_verify',
      `update users set state = 'active' where realm_id = old.realm_id and id = '${second}'; return new;`,
    );
    const report = await run();
    assert.deepEqual([report.erased, report.skipped, report.failed_accounts], [1, 1, 0]);
    assert.equal(await stateOf(h, realm, first), 'deleted');
    assert.equal(await stateOf(h, realm, second), 'active');
    assert.equal((await audits(h, realm, 'user.deleted')).length, 1);
  });
});
