// Audit history imported from another system with its accounts (spec doc 2, Audit endpoints:
// GET /imported-audit-events; Personal data export; Data lifecycle 1). Kept apart from the
// service's own evidence: never sealed, never in audit exports, deleted by its own retention
// counted from the import. Ids are ULIDs of occurred_at, so id order is time order.
import { many, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';

export interface ImportedAuditEvent {
  userId: string;
  eventType: string;
  occurredAt: Date;
  outcome: 'success' | 'failure';
  data: Record<string, unknown>;
}

export interface ImportedAuditEventRow {
  id: string;
  user_id: string;
  source_system: string;
  event_type: string;
  occurred_at: Date;
  outcome: string;
  data: Record<string, unknown>;
  imported_at: Date;
  job_id: string;
}

export async function insertImportedAuditEvents(
  tx: Tx,
  realmId: string,
  sourceSystem: string,
  jobId: string,
  events: readonly ImportedAuditEvent[],
  now: Date,
): Promise<void> {
  if (events.length === 0) return;
  await tx.query(
    `insert into imported_audit_events (realm_id, id, user_id, source_system, event_type, occurred_at, outcome,
       data, imported_at, job_id)
     select $1, id, u, $2, t, o, r, d, $3, $4
       from unnest($5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::text[], $10::jsonb[])
         as x(id, u, t, o, r, d)`,
    [
      realmId,
      sourceSystem,
      now,
      jobId,
      events.map((e) => newId('iae', e.occurredAt.getTime())),
      events.map((e) => e.userId),
      events.map((e) => e.eventType),
      events.map((e) => e.occurredAt),
      events.map((e) => e.outcome),
      events.map((e) => JSON.stringify(e.data)),
    ],
  );
}

export interface ImportedEventFilters {
  userId?: string;
  sourceSystem?: string;
  eventType?: string;
  from?: Date;
  to?: Date;
}

/** One page, newest first; `after` is the last id of the previous page. */
export async function listImportedAuditEvents(
  q: Queryable,
  realmId: string,
  f: ImportedEventFilters,
  after: string | null,
  limit: number,
): Promise<ImportedAuditEventRow[]> {
  return many<ImportedAuditEventRow>(
    q,
    `select id, user_id, source_system, event_type, occurred_at, outcome, data, imported_at, job_id
       from imported_audit_events
      where realm_id = $1 and ($2::text is null or user_id = $2) and ($3::text is null or source_system = $3)
        and ($4::text is null or event_type = $4) and ($5::timestamptz is null or occurred_at >= $5)
        and ($6::timestamptz is null or occurred_at < $6) and ($7::text is null or id < $7)
      order by id desc limit $8`,
    [
      realmId,
      f.userId ?? null,
      f.sourceSystem ?? null,
      f.eventType ?? null,
      f.from ?? null,
      f.to ?? null,
      after,
      limit,
    ],
  );
}

/**
 * Deletes up to `limit` imported records whose retention, counted from their import, has passed:
 * privacy.audit_retention_by_category.imported, else privacy.audit_retention (`keepMs`).
 */
export async function pruneImportedAuditEvents(
  tx: Tx,
  keepMs: number,
  now: Date,
  limit: number,
): Promise<number> {
  const r = await tx.query(
    `delete from imported_audit_events where (realm_id, id) in (
       select realm_id, id from imported_audit_events where imported_at <= $1 order by imported_at limit $2)`,
    [new Date(now.getTime() - keepMs), limit],
  );
  return r.rowCount;
}
