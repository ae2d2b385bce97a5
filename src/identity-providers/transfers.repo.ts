// SQL of federation transfers and their entries (migrations/0032). Every statement filters on the
// realm; bulk writes go in slices so 50,000 entries never make one oversized statement.
import type { Queryable } from '../platform/db/db.ts';
import type { Analysed, EntryInput, LinkFacts, Outcome } from './transfer-analysis.ts';

export type TransferState = 'draft' | 'approved' | 'applied' | 'cancelled';
export type TransferMode = 'map' | 'same_subject';

export interface TransferRow {
  realm_id: string;
  id: string;
  source_provider_id: string;
  target_provider_id: string;
  mode: TransferMode;
  target_tenant: string | null;
  reason: string;
  state: TransferState;
  summary: Record<string, number>;
  created_by_type: string;
  created_by_id: string | null;
  approved_by_type: string | null;
  approved_by_id: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
  approved_at: Date | null;
  applied_at: Date | null;
  cancelled_at: Date | null;
}

export interface EntryRow extends EntryInput {
  outcome: Outcome;
  link_id: string | null;
  target_issuer: string | null;
}

const SLICE = 2000;

function* slices<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += SLICE) yield items.slice(i, i + SLICE);
}

export async function insertTransfer(
  q: Queryable,
  t: Omit<
    TransferRow,
    | 'version'
    | 'updated_at'
    | 'approved_by_type'
    | 'approved_by_id'
    | 'approved_at'
    | 'applied_at'
    | 'cancelled_at'
  >,
): Promise<TransferRow> {
  const r = await q.query<TransferRow>(
    `insert into federation_transfers (realm_id, id, source_provider_id, target_provider_id, mode, target_tenant,
       reason, state, summary, created_by_type, created_by_id, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) returning *`,
    [
      t.realm_id,
      t.id,
      t.source_provider_id,
      t.target_provider_id,
      t.mode,
      t.target_tenant,
      t.reason,
      t.state,
      JSON.stringify(t.summary),
      t.created_by_type,
      t.created_by_id,
      t.created_at,
    ],
  );
  return r.rows[0] as TransferRow;
}

export async function findTransfer(
  q: Queryable,
  realmId: string,
  id: string,
  lock = false,
): Promise<TransferRow | null> {
  const r = await q.query<TransferRow>(
    `select * from federation_transfers where realm_id = $1 and id = $2${lock ? ' for update' : ''}`,
    [realmId, id],
  );
  return r.rows[0] ?? null;
}

/** Newest first (ids are time-ordered), after the cursor's id. */
export async function listTransfers(
  q: Queryable,
  realmId: string,
  before: string | null,
  limit: number,
): Promise<TransferRow[]> {
  const r = await q.query<TransferRow>(
    `select * from federation_transfers where realm_id = $1 and ($2::text is null or id < $2)
      order by id desc limit $3`,
    [realmId, before, limit + 1],
  );
  return r.rows;
}

/** Writes the members given and bumps the version (the ETag). */
export async function updateTransfer(
  q: Queryable,
  realmId: string,
  id: string,
  set: Partial<
    Pick<
      TransferRow,
      | 'state'
      | 'summary'
      | 'approved_by_type'
      | 'approved_by_id'
      | 'approved_at'
      | 'applied_at'
      | 'cancelled_at'
    >
  >,
  now: Date,
): Promise<TransferRow> {
  const cols = Object.keys(set) as (keyof typeof set)[];
  const values = cols.map((c) => (c === 'summary' ? JSON.stringify(set[c]) : set[c]));
  const assignments = cols.map((c, i) => `${c} = $${i + 4}`).join(', ');
  const r = await q.query<TransferRow>(
    `update federation_transfers set ${assignments}${cols.length ? ', ' : ''}version = version + 1, updated_at = $3
      where realm_id = $1 and id = $2 returning *`,
    [realmId, id, now, ...values],
  );
  return r.rows[0] as TransferRow;
}

export async function countEntries(q: Queryable, realmId: string, transferId: string): Promise<number> {
  const r = await q.query<{ n: number }>(
    'select coalesce(max(seq), 0)::int as n from federation_transfer_entries where realm_id = $1 and transfer_id = $2',
    [realmId, transferId],
  );
  return r.rows[0]?.n ?? 0;
}

/** Appends entries numbered from `firstSeq`, outcome unset until the analysis that follows. */
export async function insertEntries(
  q: Queryable,
  realmId: string,
  transferId: string,
  firstSeq: number,
  entries: readonly Omit<EntryInput, 'seq'>[],
): Promise<void> {
  let seq = firstSeq;
  for (const part of slices(entries)) {
    await q.query(
      `insert into federation_transfer_entries (realm_id, transfer_id, seq, source_subject, source_issuer,
         target_subject, target_tenant, outcome)
       select $1, $2, $3 + ord - 1, ss, si, ts, tt, 'missing_source'
         from unnest($4::text[], $5::text[], $6::text[], $7::text[]) with ordinality as e(ss, si, ts, tt, ord)`,
      [
        realmId,
        transferId,
        seq,
        part.map((e) => e.source_subject),
        part.map((e) => e.source_issuer),
        part.map((e) => e.target_subject),
        part.map((e) => e.target_tenant),
      ],
    );
    seq += part.length;
  }
}

export async function loadEntries(q: Queryable, realmId: string, transferId: string): Promise<EntryRow[]> {
  const r = await q.query<EntryRow>(
    `select seq, source_subject, source_issuer, target_subject, target_tenant, outcome, link_id, target_issuer
       from federation_transfer_entries where realm_id = $1 and transfer_id = $2 order by seq`,
    [realmId, transferId],
  );
  return r.rows;
}

export async function saveOutcomes(
  q: Queryable,
  realmId: string,
  transferId: string,
  analysed: readonly Pick<Analysed, 'seq' | 'outcome' | 'linkId' | 'targetIssuer'>[],
): Promise<void> {
  for (const part of slices(analysed)) {
    await q.query(
      `update federation_transfer_entries f set outcome = e.outcome, link_id = e.link_id, target_issuer = e.target_issuer
         from unnest($3::int[], $4::text[], $5::text[], $6::text[]) as e(seq, outcome, link_id, target_issuer)
        where f.realm_id = $1 and f.transfer_id = $2 and f.seq = e.seq`,
      [
        realmId,
        transferId,
        part.map((a) => a.seq),
        part.map((a) => a.outcome),
        part.map((a) => a.linkId),
        part.map((a) => a.targetIssuer),
      ],
    );
  }
}

export async function pageEntries(
  q: Queryable,
  realmId: string,
  transferId: string,
  outcome: Outcome | null,
  after: number,
  limit: number,
): Promise<EntryRow[]> {
  const r = await q.query<EntryRow>(
    `select seq, source_subject, source_issuer, target_subject, target_tenant, outcome, link_id, target_issuer
       from federation_transfer_entries
      where realm_id = $1 and transfer_id = $2 and ($3::text is null or outcome = $3) and seq > $4
      order by seq limit $5`,
    [realmId, transferId, outcome, after, limit + 1],
  );
  return r.rows;
}

/** The links of one connection; locked when an apply is about to move them. */
export async function linksOfConnection(
  q: Queryable,
  realmId: string,
  providerId: string,
  lock = false,
): Promise<LinkFacts[]> {
  const r = await q.query<LinkFacts>(
    `select id, user_id, upstream_issuer, upstream_subject from linked_identities
      where realm_id = $1 and provider_id = $2 order by id${lock ? ' for update' : ''}`,
    [realmId, providerId],
  );
  return r.rows;
}

/**
 * Moves links to the target connection keeping id and account (provenance federation_transfer),
 * and drops the upstream tokens kept for them under the old connection.
 */
export async function moveLinksToConnection(
  q: Queryable,
  realmId: string,
  fromProviderId: string,
  toProviderId: string,
  moves: readonly { linkId: string; issuer: string; subject: string }[],
  now: Date,
): Promise<void> {
  for (const part of slices(moves)) {
    const ids = part.map((m) => m.linkId);
    await q.query(
      'delete from upstream_tokens where realm_id = $1 and provider_id = $2 and linked_identity_id = any($3::text[])',
      [realmId, fromProviderId, ids],
    );
    await q.query(
      `update linked_identities l set provider_id = $3, upstream_issuer = e.issuer, upstream_subject = e.subject,
              provenance = 'federation_transfer', updated_at = $4
         from unnest($5::text[], $6::text[], $7::text[]) as e(id, issuer, subject)
        where l.realm_id = $1 and l.provider_id = $2 and l.id = e.id`,
      [
        realmId,
        fromProviderId,
        toProviderId,
        now,
        ids,
        part.map((m) => m.issuer),
        part.map((m) => m.subject),
      ],
    );
  }
}

/** Deletes source links made redundant by a link the account already has at the target. */
export async function deleteSourceLinks(
  q: Queryable,
  realmId: string,
  providerId: string,
  linkIds: readonly string[],
): Promise<void> {
  for (const part of slices(linkIds)) {
    await q.query(
      'delete from linked_identities where realm_id = $1 and provider_id = $2 and id = any($3::text[])',
      [realmId, providerId, part],
    );
  }
}

/** Entries of transfers applied or cancelled before `before`, a batch at a time (doc 2, Data lifecycle 3). */
export async function pruneEndedEntries(q: Queryable, before: Date, batch: number): Promise<number> {
  const r = await q.query(
    `delete from federation_transfer_entries e using (
       select x.realm_id, x.transfer_id, x.seq from federation_transfer_entries x
         join federation_transfers t on t.realm_id = x.realm_id and t.id = x.transfer_id
        where t.state in ('applied', 'cancelled') and coalesce(t.applied_at, t.cancelled_at) < $1
        limit $2) d
      where e.realm_id = d.realm_id and e.transfer_id = d.transfer_id and e.seq = d.seq`,
    [before, batch],
  );
  return r.rowCount;
}
