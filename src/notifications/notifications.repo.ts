// SQL of the notifications queue (migrations/0017), a work queue of platform/work-queue: claims
// take due rows under a lease with FOR UPDATE SKIP LOCKED, so two workers never hold one row; a row
// whose lease ran out (its worker died mid-send) is due again.
import type { Queryable, Tx } from '../platform/db/db.ts';
import { defineQueue } from '../platform/work-queue/work-queue.ts';

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
 * The notifications table as a work queue: a claim moves a row from queued to sending under a
 * lease; one claim takes at most workers.tenant_batch_share rows of one organization (rows without
 * one count per realm), so one tenant's burst cannot fill a batch.
 */
export const NOTIFICATION_QUEUE = defineQueue<NotificationRow>({
  table: 'notifications',
  waiting: "state = 'queued'",
  dueAt: 'available_at',
  claimed: { state: 'sending', releasedTo: 'queued' },
  touched: 'updated_at',
  fairness: { column: 'organization_id', limit: 'per_claim', unowned: 'per_realm' },
});

/** Claims up to `max` due notifications for `holder`, at most `perTenant` of one tenant. */
export const claimNotifications = (
  tx: Tx,
  holder: string,
  now: Date,
  leaseUntil: Date,
  max: number,
  perTenant: number,
): Promise<NotificationRow[]> =>
  NOTIFICATION_QUEUE.claim(tx, { holder, now, leaseUntil, limit: max, share: perTenant });

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
export const oldestDueSeconds = (q: Queryable, now: Date): Promise<number> =>
  NOTIFICATION_QUEUE.oldestDueSeconds(q, now);
