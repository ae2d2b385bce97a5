// Task workflows.run (docs/workflows.md), under the task's lease: each pass takes at most 20
// workflows with work due (document 2, Limits, "Lifecycle workflows"), fires their due schedule
// triggers, then moves their due runs on, step by step. Each step is one transaction: the step's
// change with its audit records and events (carrying the run id as correlation id), the run's
// progress, the note of the events it wrote (for the chain depth) and, when the run ends, its audit
// record. A run stops at a wait until its time comes; one failing workflow never stops the others.
import { recorder } from '../audit/index.ts';
import { SYSTEM_ACTOR } from '../kernel/call.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { Logger } from '../platform/log.ts';
import { doStep, runAsOf, type StepDeps } from './workflow-steps.ts';
import { fireSchedule } from './workflow-triggers.ts';
import {
  dueRunIds,
  dueWorkflows,
  findWorkflow,
  lockRun,
  noteRunEvents,
  type RunRow,
  saveRun,
  schedulesOf,
} from './workflows.repo.ts';

export const WORKFLOWS_PER_PASS = 20;
/** Runs of one workflow moved on in one pass: a firing's worth. */
export const RUNS_PER_PASS = 500;

export interface WorkflowTaskDeps extends StepDeps {
  log?: Logger;
}

async function fireDue(deps: WorkflowTaskDeps, realmId: string, id: string, now: Date): Promise<number> {
  return deps.db.tx(async (tx) => {
    const w = await findWorkflow(tx, realmId, id, true);
    if (!w?.enabled) return 0;
    let started = 0;
    for (const s of await schedulesOf(tx, realmId, id))
      if (s.next_at.getTime() <= now.getTime()) started += await fireSchedule(tx, w, s, now);
    return started;
  });
}

type Ended = Pick<RunRow, 'state' | 'error'>;

/** Does the run's next step; answers whether another step is due at once. */
async function stepOnce(deps: WorkflowTaskDeps, realmId: string, id: string, now: Date): Promise<boolean> {
  return deps.db.tx(async (tx) => {
    const run = await lockRun(tx, realmId, id);
    const due = run?.due_at && run.due_at.getTime() <= now.getTime();
    if (!run || !due || (run.state !== 'pending' && run.state !== 'waiting')) return false;
    const call = { realmId, actor: SYSTEM_ACTOR, correlationId: run.id, now };
    const end = async (e: Ended) => {
      await saveRun(tx, { ...run, ...e, due_at: null, ended_at: now });
      await recorder(tx, call).audit(
        e.state === 'succeeded' ? 'workflow.run.succeeded' : 'workflow.run.failed',
        {
          category: 'identity',
          target: { type: 'workflow', id: run.workflow_id },
          subject: { type: 'user', id: run.user_id },
          data: { run_id: run.id, revision: run.revision, outcomes: run.outcomes, error: e.error },
        },
      );
      return false;
    };
    const w = await findWorkflow(tx, realmId, run.workflow_id);
    if (!w) return end({ state: 'failed', error: 'workflow_deleted' });
    const step = run.steps[run.next_step];
    if (!step) return end({ state: 'succeeded', error: null });
    const o = await doStep(deps, { tx, run, runAs: runAsOf(w.run_as_type, w.run_as_id), now }, step);
    await noteRunEvents(tx, realmId, run.id, run.depth);
    run.outcomes = [
      ...run.outcomes,
      {
        step: run.next_step,
        kind: step.kind,
        outcome: o.outcome,
        ...(o.code ? { code: o.code, detail: o.detail ?? '' } : {}),
        at: now.toISOString(),
      },
    ];
    if (!o.ok && step.continue_on_error !== true) return end({ state: 'failed', error: o.code ?? 'refused' });
    run.next_step++;
    if (o.resumeAt) {
      await saveRun(tx, { ...run, state: 'waiting', due_at: o.resumeAt });
      return false;
    }
    if (run.next_step >= run.steps.length) return end({ state: 'succeeded', error: null });
    await saveRun(tx, { ...run, state: 'pending', due_at: now });
    return true;
  });
}

export async function runWorkflows(deps: WorkflowTaskDeps, now: Date): Promise<TaskReport> {
  const due = await dueWorkflows(deps.db, now, WORKFLOWS_PER_PASS);
  let started = 0;
  let steps = 0;
  let failed = 0;
  for (const w of due) {
    try {
      started += await fireDue(deps, w.realm_id, w.id, now);
      for (const id of await dueRunIds(deps.db, w.realm_id, w.id, now, RUNS_PER_PASS))
        for (let more = true; more; steps++) more = await stepOnce(deps, w.realm_id, id, now);
    } catch (e) {
      failed++;
      deps.log?.warn(
        { err: (e as Error).message, workflow: w.id },
        'workflow pass failed; tried again next pass',
      );
    }
  }
  return { workflows: due.length, runs_started: started, steps, failed };
}
