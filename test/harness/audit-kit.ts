// Audit evidence under test: a harness with a worker that runs only when asked, the audit tasks
// (seal, verify_recent, archive) one run at a time, the integrity gauge, and records of the
// test's own with data an auditor re-hashes (unicode, numbers, nesting).
import type { TestContext } from 'node:test';
import { recordAudit } from '../../src/audit/index.ts';
import { SYSTEM_ACTOR } from '../../src/kernel/call.ts';
import { TASKS } from '../../src/main/worker/tasks.ts';
import { startWorker } from '../../src/main/worker/worker.ts';
import { sampleValue } from '../integration/ops/prom-text.ts';
import { type Harness, type HarnessOptions, startHarness } from './harness.ts';

const task = (name: string) => {
  const found = TASKS.find((x) => x.name === name);
  if (!found) throw new Error(`no task ${name}`);
  return found;
};

export async function auditWorker(t: TestContext, opts: HarnessOptions = {}) {
  const h = await startHarness(t, opts);
  const worker = startWorker(h.ctx, { autostart: false });
  t.after(() => worker.stop());
  const run = (name: string) => worker.scheduler.runOnce(task(name));
  return {
    h,
    worker,
    seal: () => run('audit.seal'),
    verify: () => run('audit.verify_recent'),
    archive: () => run('audit.archive'),
    metric: async (name: string) => sampleValue(await (await h.internal('/metrics')).text(), name),
  };
}

/** One audit record of the test's own in `realmId`, then sealed into a batch of its own. */
export async function sealedRecord(
  a: { h: Harness; seal: () => Promise<unknown> },
  realmId: string,
  n: number,
): Promise<void> {
  await a.h.ctx.db.tx((tx) =>
    recordAudit(
      tx,
      {
        realmId,
        type: 'user.updated',
        category: 'identity',
        actor: SYSTEM_ACTOR,
        subject: { type: 'user', id: `usr_${String(n).padStart(26, '0')}` },
        reason: `Zoë's change № ${n}`,
        data: { n, ratio: n / 3, nested: { emoji: '😀', list: [1e21, -0.5, null, true] } },
      },
      a.h.clock.now(),
    ),
  );
  await a.seal();
}
