// Lifecycle workflows (docs/workflows.md): definitions through the API within document 2's limits,
// runs started by committed events (through the outbox dispatch) and by schedule triggers on the
// harness clock, steps done by the user.bulk code with the run id as the correlation id of their
// evidence, waits, the cap of 500 runs a firing and the chain depth of 3.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { dispatchOutboxTo } from '../../../src/events/index.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { jsonColumn } from '../../../src/platform/db/db.ts';
import { startEventRuns } from '../../../src/workflows/workflow-triggers.ts';
import { runWorkflows } from '../../../src/workflows/workflows.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { seedOrganization } from '../../harness/org-kit.ts';
import { createRole, send } from '../roles/roles-kit.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Run {
  id: string;
  user_id: string;
  state: string;
  depth: number;
  error: string | null;
  outcomes: { kind: string; outcome: string; code?: string }[];
}

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const deps = workerDeps(h.ctx);
  const dispatch = () => dispatchOutboxTo({ db: h.ctx.db }, h.clock.now(), [startEventRuns]);
  // Dispatch, then a workflows pass: what the worker's two tasks do.
  const tick = async () => {
    await dispatch();
    return runWorkflows(deps, h.clock.now());
  };
  // The events written so far are older than every workflow of the test.
  await dispatch();
  const api = (method: string, path: string, body?: unknown) => send(admin, method, path, body);
  const create = async (body: unknown) => {
    const r = await api('POST', '/workflows', body);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };
  // Runs as stored, oldest first (the API's answer is checked once below; tokens do not outlive
  // the days the clock is moved on).
  const runs = async (id: string) =>
    (
      await h.ctx.db.query<Run>(
        `select id, user_id, state, depth, error, outcomes from workflow_runs
          where realm_id = $1 and workflow_id = $2 order by id`,
        [realm.id, id],
      )
    ).rows.map((r) => ({
      ...r,
      outcomes: jsonColumn<Run['outcomes']>(r.outcomes),
    }));
  const newUser = async (email: string) => {
    const r = await api('POST', '/users', { email });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id as string;
  };
  const userRow = async (id: string) =>
    (
      await h.ctx.db.query<{ state: string; required_actions: string[] }>(
        'select state, required_actions from users where realm_id = $1 and id = $2',
        [realm.id, id],
      )
    ).rows[0];
  return { h, realm, admin, api, create, runs, newUser, userRow, tick };
}

test('case=an event trigger: a new account is put in a group and an organization, the evidence carries the run id', async (t) => {
  const s = await setup(t);
  const group = await s.api('POST', '/groups', { name: 'newcomers' });
  assert.equal(group.status, 201);
  const orgId = await seedOrganization(s.h, s.realm);
  const id = await s.create({
    name: 'Joiners',
    triggers: [{ type: 'event', event_type: 'user.created', filter: { created_via: 'admin' } }],
    steps: [
      { kind: 'add_to_group', group_id: group.body.id },
      { kind: 'add_to_organization', organization_id: orgId },
    ],
  });
  const other = await s.create({
    name: 'Self-registered only',
    triggers: [{ type: 'event', event_type: 'user.created', filter: { created_via: 'registration' } }],
    steps: [{ kind: 'revoke_sessions' }],
  });
  const userId = await s.newUser('joiner@example.com');
  const report = await s.tick();
  assert.equal(report.failed, 0);

  const [run, ...more] = await s.runs(id);
  assert.equal(more.length, 0);
  assert.ok(run);
  assert.match(run.id, /^wrn_[0-9a-z]{26}$/);
  assert.deepEqual(
    [run.user_id, run.state, run.depth, run.outcomes.map((o) => o.outcome)],
    [userId, 'succeeded', 1, ['changed', 'changed']],
  );
  assert.deepEqual(await s.runs(other), [], 'the filter keeps the other workflow out');
  const listed = await s.api('GET', `/workflows/${id}/runs`);
  assert.equal(listed.status, 200);
  assert.deepEqual(
    listed.body.items.map((r: { id: string; state: string; trigger: { type: string } }) => [
      r.id,
      r.state,
      r.trigger.type,
    ]),
    [[run.id, 'succeeded', 'event']],
  );
  const members = await s.api('GET', `/groups/${group.body.id}/members`);
  assert.ok(JSON.stringify(members.body).includes(userId));

  const audit = await s.h.ctx.db.query<{ type: string }>(
    'select type from audit_events where realm_id = $1 and correlation_id = $2 order by type',
    [s.realm.id, run.id],
  );
  const types = audit.rows.map((r) => r.type);
  assert.ok(types.includes('workflow.run.succeeded'), types.join());
  assert.ok(types.length >= 3, `the two steps' records and the run's: ${types.join()}`);
  const events = await s.h.ctx.db.query<{ event_type: string }>(
    'select event_type from outbox where realm_id = $1 and correlation_id = $2',
    [s.realm.id, run.id],
  );
  assert.deepEqual(
    events.rows.map((r) => r.event_type),
    ['organization.membership.added'],
  );
  // Nothing more to do: a second tick starts and runs nothing.
  assert.deepEqual(await s.tick(), { workflows: 0, runs_started: 0, steps: 0, failed: 0 });
});

test('case=a schedule trigger: one day after an account is created it gets a required action and a mail, once', async (t) => {
  const s = await setup(t);
  const id = await s.create({
    name: 'Day one',
    triggers: [{ type: 'schedule', user_attribute: 'created_at', offset_days: 1, every_hours: 6 }],
    steps: [
      { kind: 'set_required_action', required_action: 'update_password' },
      { kind: 'send_mail', subject: 'Welcome aboard', message: 'Your first day went well.' },
    ],
  });
  const userId = (
    await s.h.createUser(s.realm, { email: 'day-one@example.com', password: 'correct horse battery' })
  ).id;
  // An account whose day came before the workflow existed is not swept up.
  const old = new Date(s.h.clock.now().getTime() - 10 * DAY);
  await s.h.ctx.db.query(
    `insert into users (realm_id, id, state, created_via, created_at, updated_at)
     values ($1, 'usr_0000000000000000000000old0', 'active', 'test', $2, $2)`,
    [s.realm.id, old],
  );
  await s.tick();
  assert.deepEqual(await s.runs(id), [], 'not a day old yet');
  s.h.clock.advance(DAY + HOUR);
  await s.tick();
  // The new account's day and the administrator's (created just before the workflow) came due.
  const runs = await s.runs(id);
  assert.deepEqual(
    runs.map((r) => [r.user_id, r.state, r.outcomes.map((o) => o.outcome).join()]).sort(),
    [
      [s.admin.userId, 'succeeded', 'changed,queued'],
      [userId, 'succeeded', 'changed,queued'],
    ].sort(),
  );
  assert.deepEqual((await s.userRow(userId))?.required_actions, ['update_password']);
  const mail = await s.h.ctx.db.query(
    `select 1 from notifications where realm_id = $1 and template = 'workflow_message'`,
    [s.realm.id],
  );
  assert.equal(mail.rows.length, 2);
  s.h.clock.advance(DAY);
  await s.tick();
  assert.equal((await s.runs(id)).length, 2, 'one date starts one run');
});

test('case=the limits: 6 triggers, 21 steps or more than 64 KiB are refused with 422; members are checked per kind', async (t) => {
  const s = await setup(t);
  const trigger = { type: 'event', event_type: 'user.created' };
  const step = { kind: 'revoke_sessions' };
  const cases: [unknown, string, string][] = [
    [{ name: 'w', triggers: Array(6).fill(trigger), steps: [step] }, 'triggers', 'too_many'],
    [{ name: 'w', triggers: [], steps: [step] }, 'triggers', 'too_few'],
    [{ name: 'w', triggers: [trigger], steps: Array(21).fill(step) }, 'steps', 'too_many'],
    [
      {
        name: 'w',
        triggers: [trigger],
        steps: Array(20).fill({ kind: 'send_mail', subject: 's', message: 'm'.repeat(4000) }),
      },
      '',
      'too_long',
    ],
    [{ name: 'w', triggers: [trigger], steps: [{ kind: 'wait' }] }, 'steps[0].duration_hours', 'required'],
    [{ name: 'w', triggers: [trigger], steps: [{ kind: 'suspend' }] }, 'steps[0].reason', 'required'],
    [
      { name: 'w', triggers: [trigger], steps: [{ kind: 'wait', duration_hours: 1, subject: 'x' }] },
      'steps[0].subject',
      'not_allowed',
    ],
    [
      { name: 'w', triggers: [{ type: 'schedule' }], steps: [step] },
      'triggers[0].user_attribute',
      'required',
    ],
    [
      { name: 'w', triggers: [{ ...trigger, filter: { user_id: 'usr_x' } }], steps: [step] },
      'triggers[0].filter.user_id',
      'not_allowed',
    ],
    [
      { name: 'w', triggers: [{ type: 'event', event_type: 'signing_key.rotated' }], steps: [step] },
      'triggers[0].event_type',
      'not_allowed',
    ],
  ];
  for (const [body, field, code] of cases) {
    const r = await s.api('POST', '/workflows', body);
    assert.equal(r.status, 422, `${field} ${code}: ${JSON.stringify(r.body).slice(0, 300)}`);
    assert.equal(r.body.code, 'validation_failed');
    assert.ok(
      (r.body.errors as { field: string; code: string }[]).some((e) => e.field === field && e.code === code),
      `${field} ${code}: ${JSON.stringify(r.body.errors)}`,
    );
  }
  assert.equal((await s.api('GET', '/workflows')).body.items.length, 0, 'nothing was written');
  // At the limits: accepted, and replaced with a new revision.
  const id = await s.create({ name: 'edge', triggers: Array(5).fill(trigger), steps: Array(20).fill(step) });
  const put = await s.api('PUT', `/workflows/${id}`, {
    name: 'edge 2',
    enabled: false,
    triggers: [trigger],
    steps: [step],
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual([put.body.name, put.body.revision, put.body.enabled], ['edge 2', 2, false]);
  // Reading needs realm.workflows.read, writing realm.workflows.write.
  const nobody = await apiCaller(s.h, s.realm, { roles: [] });
  assert.equal((await send(nobody, 'GET', '/workflows')).status, 403);
  assert.equal(
    (await send(nobody, 'POST', '/workflows', { name: 'x', triggers: [trigger], steps: [step] })).status,
    403,
  );
  // Deleted: gone from the API, the definition kept.
  assert.equal((await s.api('DELETE', `/workflows/${id}`)).status, 204);
  assert.equal((await s.api('GET', `/workflows/${id}`)).status, 404);
  const kept = await s.h.ctx.db.query('select 1 from workflows where realm_id = $1 and id = $2', [
    s.realm.id,
    id,
  ]);
  assert.equal(kept.rows.length, 1);
});

test('case=a schedule firing starts at most 500 runs; the rest start at the next firing', async (t) => {
  const s = await setup(t);
  const id = await s.create({
    name: 'Everyone new',
    triggers: [{ type: 'schedule', user_attribute: 'created_at', every_hours: 1 }],
    steps: [{ kind: 'wait', duration_hours: 1 }],
  });
  const at = new Date(s.h.clock.now().getTime() + 1000);
  await s.h.ctx.db.query(
    `insert into users (realm_id, id, state, created_via, created_at, updated_at)
     select $1, 'usr_' || lpad(i::text, 26, '0'), 'active', 'test', $2, $2 from generate_series(1, 501) i`,
    [s.realm.id, at],
  );
  s.h.clock.advance(60_000);
  const first = await s.tick();
  assert.equal(first.runs_started, 500);
  const count = async () =>
    (
      await s.h.ctx.db.query<{ n: number }>(
        'select count(*)::int as n from workflow_runs where realm_id = $1 and workflow_id = $2',
        [s.realm.id, id],
      )
    ).rows[0]?.n;
  assert.equal(await count(), 500);
  s.h.clock.advance(HOUR);
  const second = await s.tick();
  assert.equal(second.runs_started, 1);
  assert.equal(await count(), 501);
});

test('case=chain depth: runs caused by runs go three deep; the fourth is recorded as skipped', async (t) => {
  const s = await setup(t);
  const onEvent = (event_type: string) => [{ type: 'event', event_type }];
  await s.create({
    name: 'A suspends joiners',
    triggers: onEvent('user.created'),
    steps: [{ kind: 'suspend', reason: 'pending checks' }],
  });
  const b = await s.create({
    name: 'B reactivates',
    triggers: onEvent('user.suspended'),
    steps: [{ kind: 'reactivate', reason: 'checks done' }],
  });
  await s.create({
    name: 'C suspends again',
    triggers: onEvent('user.reactivated'),
    steps: [{ kind: 'suspend', reason: 'loop' }],
  });
  const userId = await s.newUser('loop@example.com');
  for (let i = 0; i < 5; i++) await s.tick();
  const runsOfB = (await s.runs(b)).map((r) => [r.depth, r.state, r.error]);
  assert.deepEqual(runsOfB, [
    [2, 'succeeded', null],
    [4, 'skipped', 'chain_depth'],
  ]);
  assert.equal((await s.userRow(userId))?.state, 'suspended', 'C, at depth 3, was the last to act');
});

test('case=a wait step: the run goes on only once the clock has passed the wait', async (t) => {
  const s = await setup(t);
  const id = await s.create({
    name: 'Verify later',
    triggers: [{ type: 'event', event_type: 'user.created' }],
    steps: [
      { kind: 'wait', duration_hours: 2 },
      { kind: 'set_required_action', required_action: 'verify_email' },
    ],
  });
  const userId = await s.newUser('later@example.com');
  await s.tick();
  assert.deepEqual(
    (await s.runs(id)).map((r) => r.state),
    ['waiting'],
  );
  s.h.clock.advance(HOUR);
  await s.tick();
  assert.deepEqual((await s.userRow(userId))?.required_actions, []);
  s.h.clock.advance(HOUR + 1000);
  await s.tick();
  assert.deepEqual(
    (await s.runs(id)).map((r) => [r.state, r.outcomes.map((o) => o.outcome).join()]),
    [['succeeded', 'waited,changed']],
  );
  assert.deepEqual((await s.userRow(userId))?.required_actions, ['verify_email']);
});

test('case=who may write and whose authority runs: each step needs its permission; a refused step fails the run unless continue_on_error', async (t) => {
  const s = await setup(t);
  await createRole(s.admin, {
    name: 'workflow-author',
    permissions: ['realm.workflows.write', 'realm.users.read'],
  });
  const author = await apiCaller(s.h, s.realm, { roles: ['workflow-author'] });
  const body = (steps: unknown[]) => ({
    name: `w${steps.length}`,
    triggers: [{ type: 'event', event_type: 'user.created' }],
    steps,
  });
  const denied = await send(author, 'POST', '/workflows', body([{ kind: 'revoke_sessions' }]));
  assert.equal(denied.status, 403, JSON.stringify(denied.body));
  assert.match(denied.body.detail, /realm\.users\.suspend/);
  assert.equal(
    (await send(author, 'POST', '/workflows', body([{ kind: 'wait', duration_hours: 1 }]))).status,
    201,
  );

  // A second administrator writes two workflows, then loses the role that let them.
  const writer = await apiCaller(s.h, s.realm);
  const missingGroup = 'grp_00000000000000000000000000';
  const goesOn = await send(writer, 'POST', '/workflows', {
    ...body([
      { kind: 'add_to_group', group_id: missingGroup, continue_on_error: true },
      { kind: 'set_required_action', required_action: 'verify_email' },
    ]),
    name: 'goes on',
  });
  const stops = await send(writer, 'POST', '/workflows', {
    ...body([{ kind: 'add_to_group', group_id: missingGroup }, { kind: 'revoke_sessions' }]),
    name: 'stops',
  });
  assert.deepEqual([goesOn.status, stops.status], [201, 201]);
  const first = await s.newUser('first@example.com');
  await s.tick();
  const outcomes = async (id: string, userId: string) =>
    (await s.runs(id))
      .filter((r) => r.user_id === userId)
      .map((r) => [r.state, r.error, r.outcomes.map((o) => o.code ?? o.outcome).join()]);
  assert.deepEqual(await outcomes(goesOn.body.id, first), [['succeeded', null, 'not_found,changed']]);
  assert.deepEqual(await outcomes(stops.body.id, first), [['failed', 'not_found', 'not_found']]);

  await s.h.ctx.db.query('delete from role_assignments where realm_id = $1 and subject_id = $2', [
    s.realm.id,
    writer.userId,
  ]);
  const second = await s.newUser('second@example.com');
  await s.tick();
  assert.deepEqual(await outcomes(stops.body.id, second), [['failed', 'forbidden', 'forbidden']]);
});
