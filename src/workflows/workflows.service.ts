// Lifecycle workflow definitions (docs/workflows.md): created, replaced and deleted by
// administrators with realm.workflows.write, each change with its audit record in one transaction.
// The writer must hold what every step does (the permission of the bulk action it reuses), and the
// steps later run with the writer's authority, re-checked at each step (workflow-steps.ts).

import { inChange, type Recorder } from '../audit/index.ts';
import { bulkPermission } from '../bulk/user-bulk.format.ts';
import type { Call } from '../kernel/call.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { callerAuthority, REALM_CONTEXT } from '../roles/delegation.ts';
import type { Delegator } from '../roles/delegator.ts';
import { bulkRequestOf, isBulkStep, type Trigger, type WorkflowInput } from './workflows.decode.ts';
import {
  findWorkflow,
  insertWorkflow,
  markDeleted,
  type NewWorkflow,
  nameTaken,
  pluginWorkflowIds,
  replaceSchedules,
  type ScheduleRow,
  schedulesOf,
  updateWorkflow,
  type WireObject,
  type WorkflowRow,
} from './workflows.repo.ts';

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** The stored (wire) form of a decoded trigger or step: its members by their wire names. */
const wireOf = (o: object): WireObject =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [snake(k), v]));

const target = (id: string) => ({ type: 'workflow', id });

/** 403 unless the writer holds the permission of every bulk action among the steps. */
async function ensureHoldsSteps(tx: Tx, call: Call, writer: Delegator, w: WorkflowInput): Promise<void> {
  for (const s of w.steps) {
    if (!isBulkStep(s)) continue;
    const need = bulkPermission(bulkRequestOf(s, 'usr_'));
    const held = await callerAuthority(
      tx,
      call.realmId,
      writer,
      need.organizationId ? { orgId: need.organizationId, projectId: null } : REALM_CONTEXT,
      call.now,
    );
    if (!held.everything && !held.permissions.has(need.permission))
      throw problem.forbidden(`the step ${s.kind} needs the permission ${need.permission}`);
  }
}

/**
 * The schedules of the triggers: a new schedule trigger fires at the next pass and counts accounts'
 * dates from now, so turning a workflow on never sweeps up every account's past (docs/decisions.md);
 * one kept from the previous revision at the same place keeps its times.
 */
function schedulesFor(
  triggers: readonly Trigger[],
  before: readonly ScheduleRow[],
  now: Date,
): ScheduleRow[] {
  return triggers.flatMap((t, i) => {
    if (t.type !== 'schedule') return [];
    const kept = before.find((s) => s.trigger_index === i);
    return [kept ?? { trigger_index: i, next_at: now, since: now }];
  });
}

function rowOf(
  call: Call,
  id: string,
  w: WorkflowInput,
  revision: number,
  createdAt: Date,
  pluginId: string | null,
): NewWorkflow {
  return {
    realm_id: call.realmId,
    id,
    name: w.name,
    description: w.description ?? null,
    enabled: w.enabled,
    triggers: w.triggers.map(wireOf),
    steps: w.steps.map(wireOf),
    event_types: [...new Set(w.triggers.flatMap((t) => (t.eventType ? [t.eventType] : [])))],
    revision,
    run_as_type: call.actor.type,
    run_as_id: call.actor.id,
    plugin_id: pluginId,
    created_at: createdAt,
    updated_at: call.now,
  };
}

const summary = (w: WorkflowInput) => ({
  name: w.name,
  enabled: w.enabled,
  triggers: w.triggers.map((t) => t.type),
  steps: w.steps.map((s) => s.kind),
});

/** Creates a workflow inside a change already open (a plugin's installation composes it). */
export async function createWorkflowInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  writer: Delegator,
  w: WorkflowInput,
  pluginId: string | null,
): Promise<WorkflowRow> {
  await ensureHoldsSteps(tx, call, writer, w);
  if (await nameTaken(tx, call.realmId, w.name, null))
    throw problem.conflict('a workflow of this realm already has this name');
  const id = newId('wfl', call.now.getTime());
  await insertWorkflow(tx, rowOf(call, id, w, 1, call.now, pluginId));
  await replaceSchedules(tx, call.realmId, id, schedulesFor(w.triggers, [], call.now));
  await record.audit('workflow.created', {
    category: 'configuration',
    target: target(id),
    data: { ...summary(w), ...(pluginId ? { plugin_id: pluginId } : {}) },
  });
  return (await findWorkflow(tx, call.realmId, id)) as WorkflowRow;
}

export const createWorkflow = (
  db: Db,
  call: Call,
  writer: Delegator,
  w: WorkflowInput,
): Promise<WorkflowRow> =>
  inChange(db, call, (tx, record) => createWorkflowInTx(tx, record, call, writer, w, null));

/** Deletes the workflows a plugin manages inside a change already open; answers how many. */
export async function removePluginWorkflowsInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  pluginId: string,
): Promise<number> {
  const ids = await pluginWorkflowIds(tx, call.realmId, pluginId);
  for (const id of ids) {
    const cancelled = await markDeleted(tx, call.realmId, id, call.now);
    await record.audit('workflow.deleted', {
      category: 'configuration',
      target: target(id),
      data: { plugin_id: pluginId, runs_cancelled: cancelled },
    });
  }
  return ids.length;
}

/** A workflow a plugin manages changes only through its plugin (docs/plugins.md). */
function refuseIfPluginManaged(w: WorkflowRow): void {
  if (w.plugin_id) throw problem.conflict('this workflow is managed by a plugin and cannot be changed here');
}

/** Replaces the definition; runs already started keep the steps they started with. */
export async function replaceWorkflow(
  db: Db,
  call: Call,
  writer: Delegator,
  id: string,
  w: WorkflowInput,
): Promise<WorkflowRow> {
  return inChange(db, call, async (tx, record) => {
    const before = await findWorkflow(tx, call.realmId, id, true);
    if (!before) throw problem.notFound('no such workflow');
    refuseIfPluginManaged(before);
    await ensureHoldsSteps(tx, call, writer, w);
    if (await nameTaken(tx, call.realmId, w.name, id))
      throw problem.conflict('a workflow of this realm already has this name');
    await updateWorkflow(tx, rowOf(call, id, w, before.revision + 1, before.created_at, null));
    const schedules = await schedulesOf(tx, call.realmId, id);
    await replaceSchedules(tx, call.realmId, id, schedulesFor(w.triggers, schedules, call.now));
    await record.audit('workflow.updated', {
      category: 'configuration',
      target: target(id),
      data: { ...summary(w), revision: before.revision + 1 },
    });
    return (await findWorkflow(tx, call.realmId, id)) as WorkflowRow;
  });
}

export async function deleteWorkflow(db: Db, call: Call, id: string): Promise<void> {
  await inChange(db, call, async (tx, record) => {
    const w = await findWorkflow(tx, call.realmId, id, true);
    if (!w) throw problem.notFound('no such workflow');
    refuseIfPluginManaged(w);
    const cancelled = await markDeleted(tx, call.realmId, id, call.now);
    await record.audit('workflow.deleted', {
      category: 'configuration',
      target: target(id),
      data: { name: w.name, runs_cancelled: cancelled },
    });
  });
}

export async function readWorkflow(db: Db, realmId: string, id: string): Promise<WorkflowRow> {
  const w = await findWorkflow(db, realmId, id);
  if (!w) throw problem.notFound('no such workflow');
  return w;
}
