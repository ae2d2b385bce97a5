// Use cases of federation transfers (spec doc 1, "Federation transfer" state table and endpoints;
// docs/federation.md, Federation transfers): a draft is created and filled, approved by another
// administrator, then applied once in one transaction, or cancelled. Every change re-analyses the
// entries and commits with its audit record.
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { type ConnectionRow, isMultiTenant } from './connection.ts';
import { lockConnection } from './connections.repo.ts';
import { ifMatchSatisfied } from './connections.service.ts';
import {
  type Analysed,
  analyseEntries,
  applicable,
  type EntryInput,
  summarise,
} from './transfer-analysis.ts';
import { ENTRIES_PER_TRANSFER, type NewEntry, type TransferInput } from './transfers.decode.ts';
import {
  countEntries,
  deleteSourceLinks,
  findTransfer,
  insertEntries,
  insertTransfer,
  linksOfConnection,
  listTransfers,
  loadEntries,
  moveLinksToConnection,
  saveOutcomes,
  type TransferRow,
  updateTransfer,
} from './transfers.repo.ts';

export const transferEtag = (version: number) => `"${version}"`;

const tooMany = (field: string) =>
  problem.validation([
    { field, code: 'too_many', detail: `a transfer holds at most ${ENTRIES_PER_TRANSFER} entries` },
  ]);

const audited = (
  record: Recorder,
  type:
    | 'federation.transfer.created'
    | 'federation.transfer.entries_added'
    | 'federation.transfer.approved'
    | 'federation.transfer.applied'
    | 'federation.transfer.cancelled',
  t: TransferRow,
  data: Record<string, unknown> = {},
) =>
  record.audit(type, {
    category: 'configuration',
    signal: 'configuration_change',
    target: { type: 'federation_transfer', id: t.id },
    data: {
      source_provider_id: t.source_provider_id,
      target_provider_id: t.target_provider_id,
      mode: t.mode,
      summary: t.summary,
      ...data,
    },
  });

/** Both connections, locked in id order so two transfers between one pair cannot deadlock. */
async function connectionsOf(tx: Tx, realmId: string, sourceId: string, targetId: string) {
  const [a, b] = [sourceId, targetId].sort();
  const rows = new Map<string, ConnectionRow | null>();
  for (const id of [a, b] as string[])
    rows.set(id, id.includes('\0') ? null : await lockConnection(tx, realmId, id));
  return { source: rows.get(sourceId) ?? null, target: rows.get(targetId) ?? null };
}

/** Analyses the entries as the links stand now and stores each outcome. */
async function reanalyse(tx: Tx, t: TransferRow, target: ConnectionRow, lockLinks: boolean) {
  const entries = await loadEntries(tx, t.realm_id, t.id);
  const sourceLinks = await linksOfConnection(tx, t.realm_id, t.source_provider_id, lockLinks);
  const targetLinks = await linksOfConnection(tx, t.realm_id, t.target_provider_id, lockLinks);
  const analysed = analyseEntries(
    { targetIssuer: target.issuer, targetTenant: t.target_tenant },
    entries,
    sourceLinks,
    targetLinks,
  );
  await saveOutcomes(tx, t.realm_id, t.id, analysed);
  return { analysed, summary: summarise(analysed.map((a) => a.outcome)) };
}

async function lockedTransfer(tx: Tx, realmId: string, id: string): Promise<TransferRow> {
  const t = id.includes('\0') ? null : await findTransfer(tx, realmId, id, true);
  if (!t) throw problem.notFound('no such federation transfer');
  return t;
}

async function lockedConnections(tx: Tx, t: TransferRow) {
  const { target } = await connectionsOf(tx, t.realm_id, t.source_provider_id, t.target_provider_id);
  // Connections with links cannot be deleted (docs/federation.md), so this holds while entries do.
  if (!target) throw problem.conflict('the target connection no longer exists');
  return target;
}

export async function createTransfer(db: Db, call: Call, input: TransferInput): Promise<TransferRow> {
  if (input.sourceProviderId === input.targetProviderId)
    throw problem.validation([
      { field: 'target_provider_id', code: 'same_connection', detail: 'the two connections differ' },
    ]);
  if (input.mode === 'same_subject' && input.entries !== null)
    throw problem.validation([
      { field: 'entries', code: 'not_allowed', detail: 'same_subject transfers take every source link' },
    ]);
  return inChange(db, call, async (tx, record) => {
    const { source, target } = await connectionsOf(
      tx,
      call.realmId,
      input.sourceProviderId,
      input.targetProviderId,
    );
    const missing = [
      ...(source ? [] : [{ field: 'source_provider_id', code: 'not_found', detail: 'no such connection' }]),
      ...(target ? [] : [{ field: 'target_provider_id', code: 'not_found', detail: 'no such connection' }]),
    ];
    if (!source || !target) throw problem.validation(missing);
    if (source.organization_id !== target.organization_id)
      throw problem.validation([
        {
          field: 'target_provider_id',
          code: 'organization_mismatch',
          detail: 'both connections are realm-wide or of the same organization',
        },
      ]);
    if (input.targetTenant !== null && !isMultiTenant(target.issuer))
      throw problem.validation([
        { field: 'target_tenant', code: 'not_applicable', detail: 'the target issuer has no {tenant}' },
      ]);
    let entries: NewEntry[] = input.entries ?? [];
    if (input.mode === 'same_subject') {
      const links = await linksOfConnection(tx, call.realmId, source.id);
      if (links.length > ENTRIES_PER_TRANSFER) throw tooMany('source_provider_id');
      entries = links.map((l) => ({
        source_subject: l.upstream_subject,
        source_issuer: l.upstream_issuer,
        target_subject: l.upstream_subject,
        target_tenant: null,
      }));
    }
    const draft = await insertTransfer(tx, {
      realm_id: call.realmId,
      id: newId('fxt', call.now.getTime()),
      source_provider_id: source.id,
      target_provider_id: target.id,
      mode: input.mode,
      target_tenant: input.targetTenant,
      reason: input.reason,
      state: 'draft',
      summary: summarise([]),
      created_by_type: call.actor.type,
      created_by_id: call.actor.id,
      created_at: call.now,
    });
    await insertEntries(tx, call.realmId, draft.id, 1, entries);
    const { summary } = await reanalyse(tx, draft, target, false);
    const t = { ...draft, summary };
    await tx.query('update federation_transfers set summary = $3 where realm_id = $1 and id = $2', [
      call.realmId,
      t.id,
      JSON.stringify(summary),
    ]);
    await audited(record, 'federation.transfer.created', t, { reason: input.reason });
    return t;
  });
}

export async function addEntries(db: Db, call: Call, id: string, entries: NewEntry[]): Promise<TransferRow> {
  return inChange(db, call, async (tx, record) => {
    const t = await lockedTransfer(tx, call.realmId, id);
    if (t.state !== 'draft' || t.mode !== 'map')
      throw problem.conflict('entries are added to draft map transfers only');
    const last = await countEntries(tx, call.realmId, t.id);
    if (last + entries.length > ENTRIES_PER_TRANSFER) throw tooMany('entries');
    const target = await lockedConnections(tx, t);
    await insertEntries(tx, call.realmId, t.id, last + 1, entries);
    const { summary } = await reanalyse(tx, t, target, false);
    const row = await updateTransfer(tx, call.realmId, t.id, { summary }, call.now);
    await audited(record, 'federation.transfer.entries_added', row, { added: entries.length });
    return row;
  });
}

const sameActor = (t: TransferRow, call: Call) =>
  t.created_by_type === call.actor.type && t.created_by_id === call.actor.id;

export async function approveTransfer(
  db: Db,
  call: Call,
  id: string,
  ifMatch: string | undefined,
): Promise<TransferRow> {
  return inChange(db, call, async (tx, record) => {
    const t = await lockedTransfer(tx, call.realmId, id);
    if (t.state !== 'draft') throw problem.conflict(`the transfer is ${t.state}`);
    if (!ifMatchSatisfied(ifMatch, t.version)) throw problem.preconditionFailed();
    if (sameActor(t, call)) throw problem.forbidden('another administrator approves a transfer');
    const target = await lockedConnections(tx, t);
    const { summary } = await reanalyse(tx, t, target, false);
    if (!applicable(summary)) throw problem.conflict('no entry of the transfer can be applied');
    const row = await updateTransfer(
      tx,
      call.realmId,
      t.id,
      {
        state: 'approved',
        summary,
        approved_by_type: call.actor.type,
        approved_by_id: call.actor.id,
        approved_at: call.now,
      },
      call.now,
    );
    await audited(record, 'federation.transfer.approved', row);
    return row;
  });
}

/**
 * Applies an approved transfer once, in one transaction: re-analysed with both connections' links
 * locked, ready links move (same id and account), links made redundant by one the account already
 * has at the target are deleted. Sessions are not touched.
 */
export async function applyTransfer(db: Db, call: Call, id: string): Promise<TransferRow> {
  try {
    return await inChange(db, call, async (tx, record) => {
      const t = await lockedTransfer(tx, call.realmId, id);
      if (t.state !== 'approved') throw problem.conflict(`the transfer is ${t.state}`);
      const target = await lockedConnections(tx, t);
      const { analysed } = await reanalyse(tx, t, target, true);
      const subjects = new Map(
        (await loadEntries(tx, call.realmId, t.id)).map((e: EntryInput) => [e.seq, e.target_subject]),
      );
      const ready = analysed.filter((a) => a.outcome === 'ready');
      await moveLinksToConnection(
        tx,
        call.realmId,
        t.source_provider_id,
        t.target_provider_id,
        ready.map((a) => ({
          linkId: a.linkId as string,
          issuer: a.targetIssuer as string,
          subject: subjects.get(a.seq) as string,
        })),
        call.now,
      );
      const redundant = analysed.filter((a) => a.outcome === 'already_linked').map((a) => a.linkId as string);
      await deleteSourceLinks(tx, call.realmId, t.source_provider_id, redundant);
      const final: Analysed[] = analysed.map((a) =>
        a.outcome === 'ready' ? { ...a, outcome: 'applied' } : a,
      );
      await saveOutcomes(
        tx,
        call.realmId,
        t.id,
        ready.map((a) => ({ ...a, outcome: 'applied' as const })),
      );
      const row = await updateTransfer(
        tx,
        call.realmId,
        t.id,
        { state: 'applied', summary: summarise(final.map((a) => a.outcome)), applied_at: call.now },
        call.now,
      );
      await audited(record, 'federation.transfer.applied', row, {
        moved: ready.length,
        removed_redundant: redundant.length,
      });
      return row;
    });
  } catch (e) {
    // A sign-in linked a target identity between the analysis and the move: nothing was applied.
    if (isUniqueViolation(e)) throw problem.conflict('links changed while applying; try again');
    throw e;
  }
}

export async function cancelTransfer(db: Db, call: Call, id: string): Promise<void> {
  await inChange(db, call, async (tx, record) => {
    const t = await lockedTransfer(tx, call.realmId, id);
    if (t.state !== 'draft' && t.state !== 'approved') throw problem.conflict(`the transfer is ${t.state}`);
    const row = await updateTransfer(
      tx,
      call.realmId,
      t.id,
      { state: 'cancelled', cancelled_at: call.now },
      call.now,
    );
    await audited(record, 'federation.transfer.cancelled', row, { from: t.state });
  });
}

export async function getTransfer(db: Db, realmId: string, id: string): Promise<TransferRow> {
  const t = id.includes('\0') ? null : await findTransfer(db, realmId, id);
  if (!t) throw problem.notFound('no such federation transfer');
  return t;
}

export async function listTransferPage(db: Db, realmId: string, before: string | null, limit: number) {
  const rows = await listTransfers(db, realmId, before, limit);
  const items = rows.slice(0, limit);
  return { items, nextAfter: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
}
