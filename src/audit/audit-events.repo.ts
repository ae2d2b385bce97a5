// Reading audit events of one realm (GET /audit-events): newest first, keyset by id (ids are
// time-ordered ULIDs).
import type { Queryable } from '../platform/db/db.ts';
import type { SealedEventRow } from './audit-seal.repo.ts';

export interface AuditEventFilters {
  type?: string;
  category?: string;
  actorId?: string;
  subjectId?: string;
  targetId?: string;
  organizationId?: string;
  from?: Date;
  to?: Date;
}

export type AuditEventRow = SealedEventRow;

export async function listAuditEvents(
  q: Queryable,
  realmId: string,
  f: AuditEventFilters,
  after: string | null,
  limit: number,
): Promise<AuditEventRow[]> {
  const where = ['realm_id = $1'];
  const params: unknown[] = [realmId];
  const add = (sql: string, v: unknown) => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.type !== undefined) add('type = ?', f.type);
  if (f.category !== undefined) add('category = ?', f.category);
  if (f.actorId !== undefined) add('actor_id = ?', f.actorId);
  if (f.subjectId !== undefined) add('subject_id = ?', f.subjectId);
  if (f.targetId !== undefined) add('target_id = ?', f.targetId);
  if (f.organizationId !== undefined) add('org_id = ?', f.organizationId);
  if (f.from !== undefined) add('occurred_at >= ?', f.from);
  if (f.to !== undefined) add('occurred_at < ?', f.to);
  if (after !== null) add('id < ?', after);
  const r = await q.query<AuditEventRow>(
    `select * from audit_events where ${where.join(' and ')} order by id desc limit ${limit}`,
    params,
  );
  return r.rows;
}

export async function findAuditEvent(
  q: Queryable,
  realmId: string,
  id: string,
): Promise<AuditEventRow | null> {
  const r = await q.query<AuditEventRow>('select * from audit_events where realm_id = $1 and id = $2', [
    realmId,
    id,
  ]);
  return r.rows[0] ?? null;
}
