// Bulk actions on accounts (docs/user-bulk.md): POST /user-bulk-actions queues a user.bulk job;
// the worker's real job runner applies the action account by account, each in its own
// transaction with its audit record and event; the report is downloaded like an export. The
// permission of each action is checked at the request and again by the worker.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { JobRunner } from '../../../src/jobs/index.ts';
import { JOB_TYPES, type WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { seedOrganization } from '../../harness/org-kit.ts';
import { download } from '../exports/exports-kit.ts';

interface Report {
  format: string;
  action: string;
  counts: { changed: number; unchanged: number; refused: number };
  accounts: { user_id: string; outcome: string; code?: string }[];
}

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const users: string[] = [];
  for (let i = 0; i < 5; i++)
    users.push(
      (await h.createUser(realm, { email: `bulk-${i}@example.com`, password: 'correct horse battery' })).id,
    );
  const runner = new JobRunner<WorkerDeps>(workerDeps(h.ctx) as WorkerDeps, JOB_TYPES, {
    holder: 'bulk-test',
  });
  return { h, realm, admin, users, run: () => runner.runDue(10) };
}

async function queue(caller: ApiCallerKit, body: unknown, headers: Record<string, string> = {}) {
  const res = await caller.call('POST', '/user-bulk-actions', body, headers);
  assert.equal(res.status, 202, await res.clone().text());
  return ((await res.json()) as { job_id: string }).job_id;
}

const report = async (caller: ApiCallerKit, jobId: string) =>
  JSON.parse((await download(caller, jobId)).text) as Report;

const stateOf = async (h: Harness, realm: RealmRow, id: string) =>
  (
    await h.ctx.db.query<{ state: string }>('select state from users where realm_id = $1 and id = $2', [
      realm.id,
      id,
    ])
  ).rows[0]?.state;

test('case=suspend many accounts: each changed with its audit and event, already-suspended and unknown ones refused, the report downloadable', async (t) => {
  const s = await setup(t);
  const [a, b, c] = s.users as [string, string, string];
  const missing = 'usr_00000000000000000000000000';
  const job = await queue(
    s.admin,
    { action: 'suspend', user_ids: [a, b, missing], reason: 'offboarding' },
    {
      'idempotency-key': 'offboard-1',
    },
  );
  // The same key answers the same job.
  assert.equal(
    await queue(
      s.admin,
      { action: 'suspend', user_ids: [a, b, missing], reason: 'offboarding' },
      {
        'idempotency-key': 'offboard-1',
      },
    ),
    job,
  );
  await s.run();
  const r = await report(s.admin, job);
  assert.equal(r.format, 'service.user-bulk-report.v1');
  assert.deepEqual(r.counts, { changed: 2, unchanged: 0, refused: 1 });
  assert.deepEqual(
    r.accounts.map((x) => [x.user_id, x.outcome, x.code]),
    [
      [a, 'changed', undefined],
      [b, 'changed', undefined],
      [missing, 'refused', 'not_found'],
    ],
  );
  assert.deepEqual(
    [await stateOf(s.h, s.realm, a), await stateOf(s.h, s.realm, b), await stateOf(s.h, s.realm, c)],
    ['suspended', 'suspended', 'active'],
  );
  const audit = await s.h.ctx.db.query<{ type: string; actor_id: string; correlation_id: string }>(
    `select type, actor_id, correlation_id from audit_events
      where realm_id = $1 and type in ('user.suspended', 'user.bulk.requested') order by occurred_at, id`,
    [s.realm.id],
  );
  assert.deepEqual(
    audit.rows.map((x) => [x.type, x.actor_id]),
    [
      ['user.bulk.requested', s.admin.userId],
      ['user.suspended', s.admin.userId],
      ['user.suspended', s.admin.userId],
    ],
  );
  assert.deepEqual(
    audit.rows.slice(1).map((x) => x.correlation_id),
    [job, job],
  );
  const events = await s.h.ctx.db.query<{ n: string }>(
    `select count(*) as n from outbox where realm_id = $1 and event_type = 'user.suspended'`,
    [s.realm.id],
  );
  assert.equal(Number(events.rows[0]?.n), 2);

  // Suspending them again changes nothing; reactivating brings them back.
  const again = await queue(s.admin, { action: 'suspend', user_ids: [a], reason: 'again' });
  const back = await queue(s.admin, { action: 'reactivate', user_ids: [a, b], reason: 'rehired' });
  await s.run();
  assert.deepEqual(
    (await report(s.admin, again)).accounts.map((x) => x.code),
    ['conflict'],
  );
  assert.deepEqual((await report(s.admin, back)).counts, { changed: 2, unchanged: 0, refused: 0 });
  assert.equal(await stateOf(s.h, s.realm, a), 'active');
});

test('case=required actions, group and organization membership, sessions and deletion in bulk', async (t) => {
  const s = await setup(t);
  const [a, b, c] = s.users as [string, string, string];
  const group = await s.admin.call('POST', '/groups', { name: 'contractors' });
  assert.equal(group.status, 201);
  const groupId = ((await group.json()) as { id: string }).id;
  const orgId = await seedOrganization(s.h, s.realm);
  const jobs = {
    totp: await queue(s.admin, {
      action: 'set_required_action',
      user_ids: [a, b],
      required_action: 'configure_totp',
    }),
    group: await queue(s.admin, { action: 'add_to_group', user_ids: [a, b], group_id: groupId }),
    org: await queue(s.admin, { action: 'add_to_organization', user_ids: [a, c], organization_id: orgId }),
    sessions: await queue(s.admin, { action: 'revoke_sessions', user_ids: [b] }),
  };
  await s.run();
  assert.deepEqual((await report(s.admin, jobs.totp)).counts, { changed: 2, unchanged: 0, refused: 0 });
  const actions = await s.h.ctx.db.query<{ required_actions: string[] }>(
    'select required_actions from users where realm_id = $1 and id = $2',
    [s.realm.id, a],
  );
  assert.deepEqual(actions.rows[0]?.required_actions, ['configure_totp']);
  assert.deepEqual((await report(s.admin, jobs.group)).counts, { changed: 2, unchanged: 0, refused: 0 });
  const members = await s.admin.call('GET', `/groups/${groupId}/members`);
  const items = ((await members.json()) as { items: { subject_id?: string; id?: string }[] }).items;
  assert.equal(items.length, 2);
  assert.deepEqual((await report(s.admin, jobs.org)).counts, { changed: 2, unchanged: 0, refused: 0 });
  assert.deepEqual((await report(s.admin, jobs.sessions)).counts, { changed: 1, unchanged: 0, refused: 0 });

  // The same action again: an account that has it is unchanged.
  const repeat = await queue(s.admin, {
    action: 'set_required_action',
    user_ids: [a],
    required_action: 'configure_totp',
  });
  const removal = await queue(s.admin, { action: 'delete', user_ids: [c, s.admin.userId] });
  await s.run();
  assert.deepEqual((await report(s.admin, repeat)).counts, { changed: 0, unchanged: 1, refused: 0 });
  const deleted = await report(s.admin, removal);
  assert.deepEqual(
    deleted.accounts.map((x) => [x.outcome, x.code]),
    [
      ['changed', undefined],
      ['refused', 'forbidden'],
    ],
    "the requester's own account is never deleted by it",
  );
  assert.equal(await stateOf(s.h, s.realm, c), 'deleted');
});

test('case=the permission of the action: checked at the request and again by the worker', async (t) => {
  const s = await setup(t);
  const [a] = s.users as [string];
  // realm.users.suspend through a role of its own, without realm.users.write.
  const role = await s.admin.call('POST', '/roles', {
    name: 'suspender',
    permissions: ['realm.users.suspend'],
  });
  assert.equal(role.status, 201, await role.clone().text());
  const operator = await apiCaller(s.h, s.realm, { roles: ['suspender'] });
  const refused = await operator.call('POST', '/user-bulk-actions', { action: 'delete', user_ids: [a] });
  assert.equal(refused.status, 403);
  assert.equal(((await refused.json()) as { code: string }).code, 'forbidden');
  const job = await queue(operator, { action: 'suspend', user_ids: [a], reason: 'x' });
  // The operator loses the role before the worker runs: the job dead-letters and changes nothing.
  await s.h.ctx.db.query(`delete from role_assignments where realm_id = $1 and subject_id = $2`, [
    s.realm.id,
    operator.userId,
  ]);
  await s.run();
  const record = (await (await s.admin.call('GET', `/jobs/${job}`)).json()) as {
    state: string;
    last_error: string;
  };
  assert.equal(record.state, 'dead_letter');
  assert.match(record.last_error, /realm\.users\.suspend/);
  assert.equal(await stateOf(s.h, s.realm, a), 'active');
});

test('case=bad requests: problem responses naming the member', async (t) => {
  const s = await setup(t);
  const [a] = s.users as [string];
  const send = async (body: unknown) => {
    const r = await s.admin.call('POST', '/user-bulk-actions', body);
    return {
      status: r.status,
      body: (await r.json()) as { code: string; errors?: { field: string; code: string }[] },
    };
  };
  const tooMany = Array.from({ length: 1001 }, (_, i) => `usr_${String(i).padStart(26, '0')}`);
  const cases: [unknown, number, string, string?][] = [
    [{ action: 'suspend', user_ids: [a] }, 422, 'reason'],
    [{ action: 'set_required_action', user_ids: [a] }, 422, 'required_action'],
    [{ action: 'add_to_group', user_ids: [a] }, 422, 'group_id'],
    [
      { action: 'revoke_sessions', user_ids: [a], group_id: 'grp_00000000000000000000000000' },
      422,
      'group_id',
    ],
    [{ action: 'revoke_sessions', user_ids: [] }, 422, 'user_ids'],
    [{ action: 'revoke_sessions', user_ids: tooMany }, 422, 'user_ids'],
    [{ action: 'revoke_sessions', user_ids: [a, a] }, 422, 'user_ids[1]'],
    [{ action: 'revoke_sessions', user_ids: ['alice'] }, 422, 'user_ids[0]'],
    [{ action: 'promote', user_ids: [a] }, 422, 'action'],
    [{ action: 'revoke_sessions', user_ids: [a], extra: true }, 400, 'extra'],
  ];
  for (const [body, status, field] of cases) {
    const r = await send(body);
    assert.equal(r.status, status, `${field}: ${JSON.stringify(r.body)}`);
    assert.ok(
      r.body.errors?.some((e) => e.field === field),
      `${field}: ${JSON.stringify(r.body.errors)}`,
    );
  }
});
