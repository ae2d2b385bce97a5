// SQL for lifecycle workflows (migration 0056): definitions, their schedules and their runs.
import { jsonColumn, many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

/** A trigger or step as stored: its wire form (snake_case members). */
export type WireObject = Record<string, unknown>;

export interface WorkflowRow {
  realm_id: string;
  id: string;
  name: string;
  description: string | null;
  enabled: boolean;
  triggers: WireObject[];
  steps: WireObject[];
  event_types: string[];
  revision: number;
  run_as_type: string;
  run_as_id: string | null;
  /** The plugin that manages it (docs/plugins.md); such a workflow changes only with its plugin. */
  plugin_id: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export type RunState = 'pending' | 'waiting' | 'succeeded' | 'failed' | 'skipped' | 'cancelled';

export interface RunRow {
  realm_id: string;
  id: string;
  workflow_id: string;
  revision: number;
  user_id: string;
  trigger_type: 'event' | 'schedule';
  trigger_index: number;
  source_event_id: string | null;
  anchor: Date | null;
  depth: number;
  state: RunState;
  steps: WireObject[];
  next_step: number;
  due_at: Date | null;
  outcomes: WireObject[];
  error: string | null;
  created_at: Date;
  ended_at: Date | null;
}

const WORKFLOW = `select realm_id, id, name, description, enabled, triggers, steps, event_types, revision,
    run_as_type, run_as_id, plugin_id, created_at, updated_at, deleted_at from workflows`;
const RUN = `select realm_id, id, workflow_id, revision, user_id, trigger_type, trigger_index, source_event_id,
    anchor, depth, state, steps, next_step, due_at, outcomes, error, created_at, ended_at from workflow_runs`;

const workflowOf = (r: WorkflowRow): WorkflowRow => ({
  ...r,
  triggers: jsonColumn(r.triggers),
  steps: jsonColumn(r.steps),
});
const runOf = (r: RunRow): RunRow => ({ ...r, steps: jsonColumn(r.steps), outcomes: jsonColumn(r.outcomes) });

export type NewWorkflow = Omit<WorkflowRow, 'deleted_at'>;

/** The columns of a definition, in the order both statements below number them. */
const definitionParams = (w: NewWorkflow) => [
  w.realm_id,
  w.id,
  w.name,
  w.description,
  w.enabled,
  JSON.stringify(w.triggers),
  JSON.stringify(w.steps),
  w.event_types,
  w.revision,
  w.run_as_type,
  w.run_as_id,
  w.created_at,
  w.updated_at,
];

export async function insertWorkflow(tx: Tx, w: NewWorkflow): Promise<void> {
  await tx.query(
    `insert into workflows (realm_id, id, name, description, enabled, triggers, steps, event_types, revision,
       run_as_type, run_as_id, created_at, updated_at, plugin_id)
     values ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11, $12, $13, $14)`,
    [...definitionParams(w), w.plugin_id],
  );
}

/** A new revision of the definition; created_at is the row's own, given back unchanged. */
export async function updateWorkflow(tx: Tx, w: NewWorkflow): Promise<void> {
  await tx.query(
    `update workflows set name = $3, description = $4, enabled = $5, triggers = $6::jsonb, steps = $7::jsonb,
       event_types = $8, revision = $9, run_as_type = $10, run_as_id = $11, created_at = $12, updated_at = $13
      where realm_id = $1 and id = $2`,
    definitionParams(w),
  );
}

/** A live (not deleted) workflow; `lock` takes its row for the transaction. */
export async function findWorkflow(q: Queryable, realmId: string, id: string, lock = false) {
  const r = await maybeOne<WorkflowRow>(
    q,
    `${WORKFLOW} where realm_id = $1 and id = $2 and deleted_at is null${lock ? ' for update' : ''}`,
    [realmId, id],
  );
  return r ? workflowOf(r) : null;
}

/** The ids of the live workflows a plugin manages. */
export const pluginWorkflowIds = async (q: Queryable, realmId: string, pluginId: string) =>
  (
    await many<{ id: string }>(
      q,
      'select id from workflows where realm_id = $1 and plugin_id = $2 and deleted_at is null order by id for update',
      [realmId, pluginId],
    )
  ).map((r) => r.id);

export const nameTaken = async (q: Queryable, realmId: string, name: string, except: string | null) =>
  (
    await q.query(
      'select 1 from workflows where realm_id = $1 and name = $2 and deleted_at is null and id is distinct from $3',
      [realmId, name, except],
    )
  ).rows.length > 0;

export const listWorkflows = async (
  q: Queryable,
  realmId: string,
  page: { after: string | null; limit: number },
) =>
  (
    await many<WorkflowRow>(
      q,
      `${WORKFLOW} where realm_id = $1 and deleted_at is null and ($2::text is null or id > $2)
        order by id limit $3`,
      [realmId, page.after, page.limit + 1],
    )
  ).map(workflowOf);

/** Deleting keeps the definition (document 2, Data lifecycle 4) and ends what it had not done. */
export async function markDeleted(tx: Tx, realmId: string, id: string, now: Date): Promise<number> {
  await tx.query('update workflows set deleted_at = $3, updated_at = $3 where realm_id = $1 and id = $2', [
    realmId,
    id,
    now,
  ]);
  await tx.query('delete from workflow_schedules where realm_id = $1 and workflow_id = $2', [realmId, id]);
  const r = await tx.query(
    `update workflow_runs set state = 'cancelled', due_at = null, ended_at = $3
      where realm_id = $1 and workflow_id = $2 and state in ('pending', 'waiting')`,
    [realmId, id, now],
  );
  return r.rowCount;
}

// ---- schedules -------------------------------------------------------------------------------

export interface ScheduleRow {
  trigger_index: number;
  next_at: Date;
  since: Date;
}

export const schedulesOf = (q: Queryable, realmId: string, workflowId: string) =>
  many<ScheduleRow>(
    q,
    `select trigger_index, next_at, since from workflow_schedules where realm_id = $1 and workflow_id = $2
      order by trigger_index`,
    [realmId, workflowId],
  );

export async function replaceSchedules(
  tx: Tx,
  realmId: string,
  workflowId: string,
  rows: readonly ScheduleRow[],
): Promise<void> {
  await tx.query('delete from workflow_schedules where realm_id = $1 and workflow_id = $2', [
    realmId,
    workflowId,
  ]);
  for (const s of rows)
    await tx.query(
      `insert into workflow_schedules (realm_id, workflow_id, trigger_index, next_at, since)
       values ($1, $2, $3, $4, $5)`,
      [realmId, workflowId, s.trigger_index, s.next_at, s.since],
    );
}

export const setScheduleNext = (tx: Tx, realmId: string, workflowId: string, index: number, next: Date) =>
  tx.query(
    'update workflow_schedules set next_at = $4 where realm_id = $1 and workflow_id = $2 and trigger_index = $3',
    [realmId, workflowId, index, next],
  );

/**
 * Accounts a schedule trigger is due for: the date named plus the offset fell after the trigger
 * started counting and by now, and no run of this trigger has started on that date yet. Oldest first.
 */
export function scheduledAccounts(
  q: Queryable,
  realmId: string,
  t: { workflowId: string; index: number; column: 'created_at' | 'last_login_at'; offsetDays: number },
  window: { since: Date; now: Date },
  limit: number,
) {
  // The column is one of two constants of the decoder, never input text.
  const col = t.column === 'created_at' ? 'u.created_at' : 'u.last_login_at';
  return many<{ id: string; anchor: Date }>(
    q,
    `select u.id, ${col} as anchor from users u
      where u.realm_id = $1 and u.state not in ('deleted', 'pending_deletion') and ${col} is not null
        and ${col} + make_interval(days => $4) > $5 and ${col} + make_interval(days => $4) <= $6
        and not exists (select 1 from workflow_runs r where r.realm_id = u.realm_id and r.workflow_id = $2
          and r.trigger_type = 'schedule' and r.trigger_index = $3 and r.user_id = u.id and r.anchor = ${col})
      order by ${col}, u.id limit $7`,
    [realmId, t.workflowId, t.index, t.offsetDays, window.since, window.now, limit],
  );
}

// ---- runs ------------------------------------------------------------------------------------

export type NewRun = Omit<RunRow, 'next_step' | 'outcomes' | 'ended_at'>;

export async function insertRuns(tx: Tx, runs: readonly NewRun[]): Promise<void> {
  if (runs.length === 0) return;
  const col = <K extends keyof NewRun>(k: K) => runs.map((r) => r[k]);
  await tx.query(
    `insert into workflow_runs (realm_id, id, workflow_id, revision, user_id, trigger_type, trigger_index,
       source_event_id, anchor, depth, state, steps, due_at, created_at, error, ended_at)
     select u.realm_id, u.id, u.workflow_id, u.revision, u.user_id, u.trigger_type, u.trigger_index,
       u.source_event_id, u.anchor, u.depth, u.state, u.steps::jsonb, u.due_at, u.created_at, u.error,
       case when u.state = 'skipped' then u.created_at end
       from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::int[], $8::text[],
         $9::timestamptz[], $10::int[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[],
         $15::text[])
         as u(realm_id, id, workflow_id, revision, user_id, trigger_type, trigger_index, source_event_id, anchor,
           depth, state, steps, due_at, created_at, error)`,
    [
      col('realm_id'),
      col('id'),
      col('workflow_id'),
      col('revision'),
      col('user_id'),
      col('trigger_type'),
      col('trigger_index'),
      col('source_event_id'),
      col('anchor'),
      col('depth'),
      col('state'),
      runs.map((r) => JSON.stringify(r.steps)),
      col('due_at'),
      col('created_at'),
      col('error'),
    ],
  );
}

/** Notes the events this transaction wrote for a run (its step's events), with the run's depth. */
export const noteRunEvents = (tx: Tx, realmId: string, runId: string, depth: number) =>
  tx.query(
    `insert into workflow_run_events (realm_id, event_id, run_id, depth)
     select realm_id, id, $2, $3 from outbox
      where dispatched_at is null and realm_id = $1 and correlation_id = $2 and tx_id = pg_current_xact_id()`,
    [realmId, runId, depth],
  );

/** The depth of the runs that wrote these events, taken once: the notes go as they are read. */
export const takeRunEventDepths = (tx: Tx, realmIds: readonly string[], eventIds: readonly string[]) =>
  many<{ realm_id: string; event_id: string; depth: number }>(
    tx,
    `delete from workflow_run_events w using unnest($1::text[], $2::text[]) as k(realm_id, event_id)
      where w.realm_id = k.realm_id and w.event_id = k.event_id
      returning w.realm_id, w.event_id, w.depth`,
    [realmIds, eventIds],
  );

/** Live, enabled workflows of these realms started by any of these event types. */
export const eventWorkflows = async (q: Queryable, realmIds: readonly string[], types: readonly string[]) =>
  (
    await many<WorkflowRow>(
      q,
      `${WORKFLOW} where realm_id = any($1::text[]) and enabled and deleted_at is null
        and event_types && $2::text[] order by realm_id, id`,
      [realmIds, types],
    )
  ).map(workflowOf);

/**
 * The workflows with work due, oldest due first: a schedule to fire (enabled, live) or a run to
 * continue. At most `limit` (document 2: 20 workflows a pass).
 */
export const dueWorkflows = (q: Queryable, now: Date, limit: number) =>
  many<{ realm_id: string; id: string }>(
    q,
    `select realm_id, id from (
       select s.realm_id, s.workflow_id as id, s.next_at as due from workflow_schedules s
         join workflows w on w.realm_id = s.realm_id and w.id = s.workflow_id
        where s.next_at <= $1 and w.enabled and w.deleted_at is null
       union all
       select realm_id, workflow_id, due_at from workflow_runs where state in ('pending', 'waiting') and due_at <= $1
     ) d group by realm_id, id order by min(due), realm_id, id limit $2`,
    [now, limit],
  );

export const dueRunIds = async (
  q: Queryable,
  realmId: string,
  workflowId: string,
  now: Date,
  limit: number,
) =>
  (
    await many<{ id: string }>(
      q,
      `select id from workflow_runs where realm_id = $1 and workflow_id = $2 and state in ('pending', 'waiting')
        and due_at <= $3 order by due_at, id limit $4`,
      [realmId, workflowId, now, limit],
    )
  ).map((r) => r.id);

export async function lockRun(tx: Tx, realmId: string, id: string): Promise<RunRow | null> {
  const r = await maybeOne<RunRow>(tx, `${RUN} where realm_id = $1 and id = $2 for update`, [realmId, id]);
  return r ? runOf(r) : null;
}

/** The run unlocked: read before a step's transaction, to make its hook call outside it. */
export async function findRun(q: Queryable, realmId: string, id: string): Promise<RunRow | null> {
  const r = await maybeOne<RunRow>(q, `${RUN} where realm_id = $1 and id = $2`, [realmId, id]);
  return r ? runOf(r) : null;
}

export const saveRun = (
  tx: Tx,
  r: Pick<RunRow, 'realm_id' | 'id' | 'state' | 'next_step' | 'due_at' | 'outcomes' | 'error' | 'ended_at'>,
) =>
  tx.query(
    `update workflow_runs set state = $3, next_step = $4, due_at = $5, outcomes = $6::jsonb, error = $7, ended_at = $8
      where realm_id = $1 and id = $2`,
    [r.realm_id, r.id, r.state, r.next_step, r.due_at, JSON.stringify(r.outcomes), r.error, r.ended_at],
  );

export const listRuns = async (
  q: Queryable,
  realmId: string,
  workflowId: string,
  page: { after: string | null; limit: number },
) =>
  (
    await many<RunRow>(
      q,
      `${RUN} where realm_id = $1 and workflow_id = $2 and ($3::text is null or id > $3) order by id limit $4`,
      [realmId, workflowId, page.after, page.limit + 1],
    )
  ).map(runOf);
