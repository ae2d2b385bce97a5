// How runs start (docs/workflows.md). Event triggers: an outbox destination, so a committed event
// about an account starts the runs of the workflows waiting for it in the dispatch transaction,
// once. Schedule triggers: fired by the workflows task, each firing starting at most 500 runs
// (document 2, Limits, "Lifecycle workflows"); accounts left over start at the next firing.
// A run caused by another run's events is one deeper in the chain; past depth 3 it is recorded as
// skipped and does nothing.
import type { OutboxDestination, OutboxEvent } from '../events/index.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import {
  eventWorkflows,
  insertRuns,
  type NewRun,
  scheduledAccounts,
  setScheduleNext,
  takeRunEventDepths,
  type WireObject,
  type WorkflowRow,
} from './workflows.repo.ts';

export const MAX_CHAIN_DEPTH = 3;
export const RUNS_PER_FIRING = 500;
const HOUR = 3_600_000;

/** Every member the filter names has that value in the event's data. */
function matches(t: WireObject, e: OutboxEvent): boolean {
  if (t.type !== 'event' || t.event_type !== e.type) return false;
  const filter = (t.filter ?? {}) as Record<string, string>;
  return Object.entries(filter).every(([k, v]) => String(e.data[k] ?? '') === v);
}

const runOf = (w: WorkflowRow, userId: string, now: Date) => ({
  realm_id: w.realm_id,
  id: newId('wrn', now.getTime()),
  workflow_id: w.id,
  revision: w.revision,
  user_id: userId,
  steps: w.steps,
  due_at: now,
  created_at: now,
  error: null,
  anchor: null,
  source_event_id: null,
});

/** The outbox destination of event triggers. */
export const startEventRuns: OutboxDestination = async (tx, events, now) => {
  // The notes of events runs wrote are taken whether or not a workflow waits for them, so none stays.
  const fromRuns = events.filter((e) => e.correlationId?.startsWith('wrn_'));
  const parents = new Map(
    fromRuns.length === 0
      ? []
      : (
          await takeRunEventDepths(
            tx,
            fromRuns.map((e) => e.realmId),
            fromRuns.map((e) => e.id),
          )
        ).map((r) => [`${r.realm_id}/${r.event_id}`, r.depth]),
  );
  const about = events.filter((e) => typeof e.data.user_id === 'string');
  if (about.length === 0) return;
  const workflows = await eventWorkflows(
    tx,
    [...new Set(about.map((e) => e.realmId))],
    [...new Set(about.map((e) => e.type))],
  );
  if (workflows.length === 0) return;
  const runs: NewRun[] = [];
  for (const e of about)
    for (const w of workflows) {
      if (w.realm_id !== e.realmId) continue;
      const index = w.triggers.findIndex((t) => matches(t, e));
      if (index < 0) continue;
      const depth = (parents.get(`${e.realmId}/${e.id}`) ?? 0) + 1;
      const skipped = depth > MAX_CHAIN_DEPTH;
      runs.push({
        ...runOf(w, e.data.user_id as string, now),
        trigger_type: 'event',
        trigger_index: index,
        source_event_id: e.id,
        depth: Math.min(depth, MAX_CHAIN_DEPTH + 1),
        state: skipped ? 'skipped' : 'pending',
        ...(skipped ? { steps: [], due_at: null, error: 'chain_depth' } : {}),
      });
    }
  await insertRuns(tx, runs);
};

/** One firing of a schedule trigger: up to 500 runs, then the next firing time. Answers how many. */
export async function fireSchedule(
  tx: Tx,
  w: WorkflowRow,
  s: { trigger_index: number; since: Date },
  now: Date,
): Promise<number> {
  const t = w.triggers[s.trigger_index] as WireObject;
  const accounts = await scheduledAccounts(
    tx,
    w.realm_id,
    {
      workflowId: w.id,
      index: s.trigger_index,
      column: t.user_attribute === 'last_login_at' ? 'last_login_at' : 'created_at',
      offsetDays: Number(t.offset_days ?? 0),
    },
    { since: s.since, now },
    RUNS_PER_FIRING,
  );
  await insertRuns(
    tx,
    accounts.map((a) => ({
      ...runOf(w, a.id, now),
      trigger_type: 'schedule',
      trigger_index: s.trigger_index,
      anchor: a.anchor,
      depth: 1,
      state: 'pending',
    })),
  );
  await setScheduleNext(
    tx,
    w.realm_id,
    w.id,
    s.trigger_index,
    new Date(now.getTime() + Number(t.every_hours ?? 24) * HOUR),
  );
  return accounts.length;
}
