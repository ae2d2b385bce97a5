// Task workflows.run takes at most 20 workflows a pass (document 2, Limits, "Lifecycle workflows";
// docs/workflows.md): the 21st workflow with a run due waits for the next pass.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dispatchOutboxTo } from '../../../src/events/index.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { startEventRuns } from '../../../src/workflows/workflow-triggers.ts';
import { runWorkflows, WORKFLOWS_PER_PASS } from '../../../src/workflows/workflows.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { send } from '../roles/roles-kit.ts';

test('case=21 workflows with a run due: 20 in the first pass, the last in the next', async (t) => {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const dispatch = () => dispatchOutboxTo({ db: h.ctx.db }, h.clock.now(), [startEventRuns]);
  await dispatch();
  for (let i = 0; i <= WORKFLOWS_PER_PASS; i++) {
    const r = await send(admin, 'POST', '/workflows', {
      name: `joiner ${i}`,
      triggers: [{ type: 'event', event_type: 'user.created' }],
      steps: [{ kind: 'revoke_sessions' }],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  assert.equal((await send(admin, 'POST', '/users', { email: 'many@example.com' })).status, 201);
  await dispatch();
  const deps = workerDeps(h.ctx);
  const states = async () =>
    (
      await h.ctx.db.query<{ state: string; n: number }>(
        'select state, count(*)::int as n from workflow_runs where realm_id = $1 group by state order by state',
        [realm.id],
      )
    ).rows.map((r) => [r.state, r.n]);
  assert.deepEqual(await states(), [['pending', 21]]);
  const first = await runWorkflows(deps, h.clock.now());
  assert.deepEqual([first.workflows, first.failed], [20, 0]);
  assert.deepEqual(await states(), [
    ['pending', 1],
    ['succeeded', 20],
  ]);
  const second = await runWorkflows(deps, h.clock.now());
  assert.deepEqual([second.workflows, second.failed], [1, 0]);
  assert.deepEqual(await states(), [['succeeded', 21]]);
});
