// A lifecycle workflow's call_hook step (docs/workflows.md, docs/hooks.md): it calls a
// workflow_step hook by id with the run's account and run id, outside any database transaction,
// counted in service_hook_calls_total; a failed call fails the step only when the hook is
// fail_closed. Runs are moved on by the worker's two tasks, called here directly.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { dispatchOutboxTo } from '../../../src/events/index.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { jsonColumn } from '../../../src/platform/db/db.ts';
import { startEventRuns } from '../../../src/workflows/workflow-triggers.ts';
import { runWorkflows } from '../../../src/workflows/workflows.task.ts';
import { json } from '../webhooks/webhook-kit.ts';
import { createHook, hookCalls, hookSetup, type Json, receiverUrl, startDeadServer } from './hooks-kit.ts';

interface Run {
  id: string;
  user_id: string;
  state: string;
  error: string | null;
  outcomes: { kind: string; outcome: string; code?: string }[];
}

async function setup(t: TestContext) {
  const s = await hookSetup(t);
  const deps = workerDeps(s.h.ctx);
  const dispatch = () => dispatchOutboxTo({ db: s.h.ctx.db }, s.h.clock.now(), [startEventRuns]);
  await dispatch();
  const tick = async () => {
    await dispatch();
    return runWorkflows(deps, s.h.clock.now());
  };
  const workflow = async (steps: Json[]) => {
    const r = await s.admin.call('POST', '/workflows', {
      name: `joiners ${steps.length}`,
      triggers: [{ type: 'event', event_type: 'user.created' }],
      steps,
    });
    const body = await json(r);
    assert.equal(r.status, 201, JSON.stringify(body));
    return String(body.id);
  };
  const newUser = async (email: string) => {
    const r = await s.admin.call('POST', '/users', { email });
    const body = await json(r);
    assert.equal(r.status, 201, JSON.stringify(body));
    return String(body.id);
  };
  const runs = async (id: string) =>
    (
      await s.h.ctx.db.query<Run>(
        'select id, user_id, state, error, outcomes from workflow_runs where realm_id = $1 and workflow_id = $2',
        [s.realm.id, id],
      )
    ).rows.map((r) => ({ ...r, outcomes: jsonColumn<Run['outcomes']>(r.outcomes) }));
  return { ...s, tick, workflow, newUser, runs };
}

test('case=call_hook calls the workflow_step hook with the account and run id, outside the step transaction', async (t) => {
  const s = await setup(t);
  const hook = await createHook(s.admin, {
    kind: 'workflow_step',
    url: receiverUrl(s.receiver),
    client_ids: [],
  });
  // The receiver takes the run's row itself before it answers: were the step's transaction open
  // (it locks the run), this would fail at once on PostgreSQL and wait past the timeout on PGlite.
  const seen: string[] = [];
  s.receiver.answer = (_req, res, body) => {
    const runId = String((JSON.parse(body) as { data: Json }).data.run_id);
    s.h.ctx.db
      .tx(async (tx) => {
        const r = await tx.query<{ state: string }>(
          `select state from workflow_runs where realm_id = $1 and id = $2 for update${s.h.ctx.db.kind === 'postgres' ? ' nowait' : ''}`,
          [s.realm.id, runId],
        );
        seen.push(r.rows[0]?.state ?? 'none');
      })
      .then(
        () => res.end(),
        () => {
          seen.push('locked');
          res.end();
        },
      );
  };
  const id = await s.workflow([{ kind: 'call_hook', hook_id: hook.id }, { kind: 'revoke_sessions' }]);
  const user = await s.newUser('joiner@example.com');
  const pass = await s.tick();
  assert.equal(pass.failed, 0);
  const [run] = await s.runs(id);
  assert.ok(run);
  assert.equal(run.state, 'succeeded', JSON.stringify(run));
  assert.deepEqual(
    run.outcomes.map((o) => o.kind),
    ['call_hook', 'revoke_sessions'],
  );
  assert.equal(run.outcomes[0]?.outcome, 'called');
  assert.deepEqual(seen, ['pending']);
  const sent = JSON.parse(s.receiver.received.at(-1)?.body ?? '{}') as {
    type: string;
    hook_id: string;
    data: Json;
  };
  assert.equal(sent.type, 'workflow_step');
  assert.equal(sent.hook_id, hook.id);
  assert.deepEqual(sent.data, { client_id: null, user_id: user, run_id: run.id, workflow_id: id, step: 0 });
  assert.equal(await hookCalls(s, 'workflow_step', 'ok'), 1);
});

test('case=a dead fail_closed hook fails the step and the run; a dead fail_open one lets it go on', async (t) => {
  const s = await setup(t);
  const dead = await startDeadServer(t);
  const closed = await createHook(s.admin, {
    kind: 'workflow_step',
    url: dead.url,
    timeout_ms: 200,
    failure_mode: 'fail_closed',
    client_ids: [],
  });
  const open = await createHook(s.admin, {
    kind: 'workflow_step',
    url: dead.url,
    timeout_ms: 200,
    failure_mode: 'fail_open',
    client_ids: [],
  });
  const failing = await s.workflow([{ kind: 'call_hook', hook_id: closed.id }, { kind: 'revoke_sessions' }]);
  const going = await s.workflow([{ kind: 'call_hook', hook_id: open.id }]);
  await s.newUser('leaver@example.com');
  await s.tick();
  const [failed] = await s.runs(failing);
  assert.equal(failed?.state, 'failed', JSON.stringify(failed));
  assert.equal(failed?.error, 'hook_failed');
  assert.deepEqual(
    failed?.outcomes.map((o) => [o.outcome, o.code]),
    [['refused', 'hook_failed']],
  );
  const [went] = await s.runs(going);
  assert.equal(went?.state, 'succeeded', JSON.stringify(went));
  assert.deepEqual(
    went?.outcomes.map((o) => [o.outcome, o.code]),
    [['unanswered', 'timeout']],
  );
  assert.equal(await hookCalls(s, 'workflow_step', 'timeout'), 2);
});

test('case=a hook of another kind, a deleted or a disabled hook: the step is refused or passes as its mode says', async (t) => {
  const s = await setup(t);
  const token = await createHook(s.admin, { kind: 'before_token_issuance', url: receiverUrl(s.receiver) });
  const closed = await createHook(s.admin, {
    kind: 'workflow_step',
    url: receiverUrl(s.receiver),
    failure_mode: 'fail_closed',
    client_ids: [],
    state: 'disabled',
  });
  const wrongKind = await s.workflow([{ kind: 'call_hook', hook_id: token.id }]);
  const disabled = await s.workflow([
    { kind: 'call_hook', hook_id: closed.id },
    { kind: 'wait', duration_hours: 1 },
  ]);
  await s.newUser('mover@example.com');
  await s.tick();
  const [a] = await s.runs(wrongKind);
  assert.deepEqual([a?.state, a?.error], ['failed', 'not_found']);
  const [b] = await s.runs(disabled);
  assert.deepEqual([b?.state, b?.error], ['failed', 'hook_failed']);
  assert.equal(s.receiver.received.length, 0, 'nothing was called');
});

test('case=a call_hook step names its hook and nothing else', async (t) => {
  const s = await setup(t);
  const bad = async (steps: Json[]) => {
    const r = await s.admin.call('POST', '/workflows', {
      name: 'bad',
      triggers: [{ type: 'event', event_type: 'user.created' }],
      steps,
    });
    const body = await json(r);
    assert.equal(r.status, 422, JSON.stringify(body));
    return (body.errors as { field: string; code: string }[]).map((e) => [e.field, e.code]);
  };
  assert.deepEqual(await bad([{ kind: 'call_hook' }]), [['steps[0].hook_id', 'required']]);
  assert.deepEqual(
    await bad([{ kind: 'call_hook', hook_id: 'hok_01jd8x0c3e5g7j9k1m3p5r7t9v', subject: 'x' }]),
    [['steps[0].subject', 'not_allowed']],
  );
  assert.deepEqual(
    await bad([{ kind: 'send_mail', subject: 's', message: 'm', hook_id: 'hok_01jd8x0c3e5g7j9k1m3p5r7t9v' }]),
    [['steps[0].hook_id', 'not_allowed']],
  );
});
