// SQL of the notifications queue (migrations/0017). Claims take due rows under a lease with
// FOR UPDATE SKIP LOCKED, so two workers never hold one row; a row whose lease ran out (its worker
// died mid-send) is due again.
import type { Queryable, Tx } from '../platform/db/db.ts';

export interface NotificationRow {
  realm_id: string;
  id: string;
  channel: 'email' | 'sms';
  template: string;
  organization_id: string | null;
  state: 'queued' | 'sending' | 'sent' | 'failed';
  payload: { sealed: string } | null;
  attempts: number;
  available_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  last_error: string | null;
  created_at: Date;
}

export async function insertNotification(
  tx: Tx,
  n: {
    realmId: string;
    id: string;
    channel: string;
    template: string;
    organizationId: string | null;
    sealed: string;
  },
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into notifications (realm_id, id, channel, template, organization_id, state, payload, available_at,
       created_at, updated_at)
     values ($1, $2, $3, $4, $5, 'queued', $6, $7, $7, $7)`,
    [n.realmId, n.id, n.channel, n.template, n.organizationId, JSON.stringify({ sealed: n.sealed }), now],
  );
}

/**
 * Claims up to `max` due notifications for `holder`, at most `perTenant` of them per organization
 * (notifications without one count per realm), so one tenant's burst cannot fill a batch.
 */
export async function claimNotifications(
  tx: Tx,
  holder: string,
  now: Date,
  leaseUntil: Date,
  max: number,
  perTenant: number,
): Promise<NotificationRow[]> {
  const r = await tx.query<NotificationRow>(
    `with candidates as (
       select realm_id, id, organization_id, available_at from notifications
        where (state = 'queued' and available_at <= $2) or (state = 'sending' and locked_until <= $2)
        order by available_at, id
        limit $4 * 4
        for update skip locked),
     ranked as (
       select realm_id, id, available_at,
              row_number() over (partition by realm_id, coalesce(organization_id, '') order by available_at, id) as rn
         from candidates),
     chosen as (
       select realm_id, id from ranked where rn <= $5 order by available_at, id limit $4)
     update notifications n set state = 'sending', locked_by = $1, locked_until = $3, attempts = n.attempts + 1,
            updated_at = $2
       from chosen c where n.realm_id = c.realm_id and n.id = c.id
     returning n.*`,
    [holder, now, leaseUntil, max, perTenant],
  );
  return r.rows;
}

/** Locks a claimed row; null unless `holder` still holds its lease. */
export async function lockClaimed(tx: Tx, realmId: string, id: string, holder: string) {
  const r = await tx.query<NotificationRow>(
    `select * from notifications where realm_id = $1 and id = $2 and state = 'sending' and locked_by = $3
      for update`,
    [realmId, id, holder],
  );
  return r.rows[0] ?? null;
}

export async function markSent(tx: Tx, realmId: string, id: string, now: Date): Promise<void> {
  await tx.query(
    `update notifications set state = 'sent', sent_at = $3, locked_by = null, locked_until = null, last_error = null,
       updated_at = $3 where realm_id = $1 and id = $2`,
    [realmId, id, now],
  );
}

export async function markRetry(tx: Tx, realmId: string, id: string, at: Date, error: string, now: Date) {
  await tx.query(
    `update notifications set state = 'queued', available_at = $3, last_error = $4, locked_by = null,
       locked_until = null, updated_at = $5 where realm_id = $1 and id = $2`,
    [realmId, id, at, error, now],
  );
}

export async function markFailed(tx: Tx, realmId: string, id: string, error: string, now: Date) {
  await tx.query(
    `update notifications set state = 'failed', last_error = $3, locked_by = null, locked_until = null,
       updated_at = $4 where realm_id = $1 and id = $2`,
    [realmId, id, error, now],
  );
}

/** Clears recipients and message text older than delivery.payload_retention. */
export async function purgePayloads(q: Queryable, before: Date, now: Date, limit: number): Promise<number> {
  const r = await q.query(
    `update notifications set payload = null, payload_purged_at = $2
      where (realm_id, id) in (select realm_id, id from notifications
        where payload is not null and state in ('sent', 'failed') and created_at < $1 limit $3)`,
    [before, now, limit],
  );
  return r.rowCount ?? 0;
}

/** Deletes rows older than privacy.history_retention. */
export async function deleteOldNotifications(q: Queryable, before: Date, limit: number): Promise<number> {
  const r = await q.query(
    `delete from notifications where (realm_id, id) in (select realm_id, id from notifications
        where created_at < $1 and state in ('sent', 'failed') limit $2)`,
    [before, limit],
  );
  return r.rowCount ?? 0;
}

/** Seconds the oldest due notification has waited; 0 when none is due. */
export async function oldestDueSeconds(q: Queryable, now: Date): Promise<number> {
  const r = await q.query<{ due: Date | null }>(
    `select min(available_at) as due from notifications
      where (state = 'queued' and available_at <= $1) or (state = 'sending' and locked_until <= $1)`,
    [now],
  );
  const due = r.rows[0]?.due;
  return due ? Math.max(0, Math.floor((now.getTime() - new Date(due).getTime()) / 1000)) : 0;
}
