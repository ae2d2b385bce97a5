// SQL of webhook deliveries: queuing at fan-out, the claim under a lease (a work queue of
// platform/work-queue, as jobs and notifications are), the end of an attempt guarded by that lease,
// lists and backlog.
import { type Db, deleteBatch, type Queryable, type Tx } from '../platform/db/db.ts';
import { type ClaimedItem, defineQueue } from '../platform/work-queue/work-queue.ts';
import type { AttemptCategory, DeliveryState } from './delivery.states.ts';

export interface DeliveryRow {
  realm_id: string;
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  event_version: number;
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_category: AttemptCategory | null;
  last_failure_category: AttemptCategory | null;
  delivered_at: Date | null;
  created_at: Date;
}

export interface NewDelivery {
  realmId: string;
  id: string;
  subscriptionId: string;
  eventId: string;
  eventType: string;
  eventVersion: number;
  body: string;
}

/** Queues deliveries; an event already queued for a subscription is not queued twice. */
export async function insertDeliveries(q: Queryable, ds: readonly NewDelivery[], now: Date): Promise<number> {
  if (ds.length === 0) return 0;
  const r = await q.query(
    `insert into webhook_deliveries (realm_id, id, subscription_id, event_id, event_type, event_version, body,
       state, attempts, next_attempt_at, created_at)
     select realm_id, id, subscription_id, event_id, event_type, event_version, body, 'pending', 0, $8, $8
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[])
         as t(realm_id, id, subscription_id, event_id, event_type, event_version, body)
     on conflict (realm_id, subscription_id, event_id) do nothing`,
    [
      ds.map((d) => d.realmId),
      ds.map((d) => d.id),
      ds.map((d) => d.subscriptionId),
      ds.map((d) => d.eventId),
      ds.map((d) => d.eventType),
      ds.map((d) => d.eventVersion),
      ds.map((d) => d.body),
      now,
    ],
  );
  return r.rowCount;
}

/**
 * The deliveries table as a work queue: a claim leases a pending or retrying delivery for one
 * attempt and leaves its state alone; a worker that died mid-attempt leaves a lease that lapses, and
 * the delivery is claimed again with the same event id. No tenant share: deliveries are spread by
 * their due times.
 */
export const DELIVERY_QUEUE = defineQueue<DeliveryRow>({
  table: 'webhook_deliveries',
  waiting: "state in ('pending', 'retrying')",
  dueAt: 'next_attempt_at',
});

/** Claims up to `limit` due deliveries for one attempt each. */
export const claimDueDeliveries = (
  tx: Tx,
  holder: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<DeliveryRow[]> => DELIVERY_QUEUE.claim(tx, { holder, now, leaseUntil, limit });

export interface AttemptRecord {
  state: DeliveryState;
  nextAttemptAt: Date | null;
  status: number | null;
  category: AttemptCategory;
  at: Date;
}

/** Ends the attempt if this holder's claim of it is still the current one; false otherwise. */
export function endAttempt(db: Db, d: ClaimedItem, holder: string, a: AttemptRecord): Promise<boolean> {
  return db.tx(async (tx) => {
    if (!(await DELIVERY_QUEUE.lockClaimed(tx, d, holder))) return false;
    await tx.query(
      `update webhook_deliveries set state = $3, next_attempt_at = coalesce($4, next_attempt_at),
         locked_by = null, locked_until = null, last_attempt_at = $5, last_status = $6, last_category = $7,
         last_failure_category = case when $7 = 'success' then last_failure_category else $7 end,
         delivered_at = case when $3 = 'delivered' then $5 else delivered_at end
        where realm_id = $1 and id = $2`,
      [d.realm_id, d.id, a.state, a.nextAttemptAt, a.at, a.status, a.category],
    );
    return true;
  });
}

/** Gives a claimed delivery back unattempted (its subscription is paused), the attempt uncounted. */
export const postponeDelivery = (
  q: Queryable,
  d: ClaimedItem,
  holder: string,
  until: Date,
): Promise<boolean> => DELIVERY_QUEUE.release(q, d, holder, until, until);

/** Ends the queued deliveries of a deleted subscription as dead letters, unattempted; answers how many. */
export async function retireQueuedDeliveries(
  q: Queryable,
  realmId: string,
  subscriptionId: string,
): Promise<number> {
  const r = await q.query(
    `update webhook_deliveries set state = 'dead_letter', locked_by = null, locked_until = null
      where realm_id = $1 and subscription_id = $2 and state in ('pending', 'retrying')`,
    [realmId, subscriptionId],
  );
  return r.rowCount;
}

export async function findDelivery(
  q: Queryable,
  realmId: string,
  subscriptionId: string,
  id: string,
): Promise<DeliveryRow | null> {
  const r = await q.query<DeliveryRow>(
    'select * from webhook_deliveries where realm_id = $1 and subscription_id = $2 and id = $3',
    [realmId, subscriptionId, id],
  );
  return r.rows[0] ?? null;
}

/** Newest first (ids are time-ordered). */
export async function listDeliveries(
  q: Queryable,
  realmId: string,
  subscriptionId: string,
  before: string | null,
  limit: number,
): Promise<DeliveryRow[]> {
  const r = await q.query<DeliveryRow>(
    `select * from webhook_deliveries where realm_id = $1 and subscription_id = $2
        and ($3::text is null or id < $3)
      order by id desc limit $4`,
    [realmId, subscriptionId, before, limit],
  );
  return r.rows;
}

/** Queues a finished delivery again from its first attempt, same event id and body. */
export async function requeueDelivery(
  q: Queryable,
  realmId: string,
  id: string,
  now: Date,
): Promise<DeliveryRow | null> {
  const r = await q.query<DeliveryRow>(
    `update webhook_deliveries set state = 'pending', attempts = 0, next_attempt_at = $3,
       locked_by = null, locked_until = null
      where realm_id = $1 and id = $2 and state in ('dead_letter', 'delivered') returning *`,
    [realmId, id, now],
  );
  return r.rows[0] ?? null;
}

export interface BacklogRow {
  pending: string;
  retrying: string;
  dead_letter: string;
  delivered: string;
  oldest_due: Date | null;
  last_delivered_at: Date | null;
}

export async function backlogOf(
  q: Queryable,
  realmId: string,
  subscriptionId: string,
  now: Date,
): Promise<BacklogRow> {
  const r = await q.query<BacklogRow>(
    `select count(*) filter (where state = 'pending') as pending,
            count(*) filter (where state = 'retrying') as retrying,
            count(*) filter (where state = 'dead_letter') as dead_letter,
            count(*) filter (where state = 'delivered') as delivered,
            min(next_attempt_at) filter (where state in ('pending', 'retrying') and next_attempt_at <= $3) as oldest_due,
            max(delivered_at) as last_delivered_at
       from webhook_deliveries where realm_id = $1 and subscription_id = $2`,
    [realmId, subscriptionId, now],
  );
  return r.rows[0]!;
}

export async function lastFailureCategory(
  q: Queryable,
  realmId: string,
  subscriptionId: string,
): Promise<string | null> {
  const r = await q.query<{ c: string | null }>(
    `select last_failure_category as c from webhook_deliveries
      where realm_id = $1 and subscription_id = $2 and last_failure_category is not null
      order by last_attempt_at desc nulls last limit 1`,
    [realmId, subscriptionId],
  );
  return r.rows[0]?.c ?? null;
}

/** Seconds the oldest due delivery of the deployment has waited; 0 when none. */
export const oldestDueSeconds = (q: Queryable, now: Date): Promise<number> =>
  DELIVERY_QUEUE.oldestDueSeconds(q, now);

/** privacy.history_retention: deliveries and dead letters go this long after creation. */
export const deleteDeliveriesBefore = (q: Queryable, cutoff: Date, limit: number): Promise<number> =>
  deleteBatch(q, 'webhook_deliveries', 'created_at < $1', cutoff, limit);
