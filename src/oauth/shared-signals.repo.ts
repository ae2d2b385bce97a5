// SQL of Shared Signals (migrations/0040_backchannel_logout.sql): the push streams receivers
// configure, and the queue of security events the database fills when a session ends, a
// credential changes or an account is disabled. Events are claimed under a lease (a work queue of
// platform/work-queue) and ended while the lease is current.
import { type Db, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { type ClaimedItem, defineQueue } from '../platform/work-queue/work-queue.ts';

export type StreamStatus = 'enabled' | 'paused' | 'disabled';

export interface StreamRow {
  realm_id: string;
  id: string;
  client_id: string;
  endpoint_url: string;
  events_requested: string[];
  events_delivered: string[];
  description: string | null;
  status: StreamStatus;
  status_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export const findStreamOfClient = (q: Queryable, realmId: string, clientId: string) =>
  maybeOne<StreamRow>(q, 'select * from ssf_streams where realm_id = $1 and client_id = $2', [
    realmId,
    clientId,
  ]);

export interface NewStream {
  clientId: string;
  endpointUrl: string;
  eventsRequested: string[];
  eventsDelivered: string[];
  description: string | null;
}

/** Inserts the client's stream, or answers null when it has one already. */
export const insertStream = (tx: Tx, realmId: string, s: NewStream, now: Date) =>
  maybeOne<StreamRow>(
    tx,
    `insert into ssf_streams (realm_id, id, client_id, endpoint_url, events_requested, events_delivered,
       description, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     on conflict (realm_id, client_id) do nothing returning *`,
    [
      realmId,
      newId('ssf', now.getTime()),
      s.clientId,
      s.endpointUrl,
      s.eventsRequested,
      s.eventsDelivered,
      s.description,
      now,
    ],
  );

export interface StreamChange {
  endpointUrl: string;
  eventsRequested: string[];
  eventsDelivered: string[];
  description: string | null;
}

export const updateStream = (tx: Tx, realmId: string, id: string, c: StreamChange, now: Date) =>
  maybeOne<StreamRow>(
    tx,
    `update ssf_streams set endpoint_url = $3, events_requested = $4, events_delivered = $5, description = $6,
       updated_at = $7
     where realm_id = $1 and id = $2 returning *`,
    [realmId, id, c.endpointUrl, c.eventsRequested, c.eventsDelivered, c.description, now],
  );

export const setStreamStatus = (
  tx: Tx,
  realmId: string,
  id: string,
  status: StreamStatus,
  reason: string | null,
  now: Date,
) =>
  maybeOne<StreamRow>(
    tx,
    `update ssf_streams set status = $3, status_reason = $4, updated_at = $5
     where realm_id = $1 and id = $2 returning *`,
    [realmId, id, status, reason, now],
  );

/** Deletes the stream and, with it, its queued events. */
export async function deleteStream(tx: Tx, realmId: string, id: string): Promise<boolean> {
  return (
    (await tx.query('delete from ssf_streams where realm_id = $1 and id = $2', [realmId, id])).rowCount === 1
  );
}

/** Queues a verification event for the stream (SSF 1.0 section 8.1.4). */
export async function queueVerification(tx: Tx, realmId: string, streamId: string, data: unknown, now: Date) {
  await tx.query(
    `insert into ssf_events (realm_id, id, stream_id, event_type, user_id, data, state, next_attempt_at, created_at)
     values ($1, 'set_' || replace(gen_random_uuid()::text, '-', ''), $2, $3, null, $4, 'pending', $5, $5)`,
    [realmId, streamId, VERIFICATION_EVENT, JSON.stringify(data), now],
  );
}

export const VERIFICATION_EVENT = 'https://schemas.openid.net/secevent/ssf/event-type/verification';

// ---- the event queue ---------------------------------------------------------------------------

export interface SsfEventRow {
  realm_id: string;
  /** Also the SET's jti. */
  id: string;
  stream_id: string;
  event_type: string;
  user_id: string | null;
  data: Record<string, unknown>;
  state: 'pending' | 'retrying' | 'delivered' | 'failed' | 'expired';
  attempts: number;
  next_attempt_at: Date;
  created_at: Date;
}

const QUEUE = defineQueue<SsfEventRow>({
  table: 'ssf_events',
  waiting: `state in ('pending', 'retrying')`,
  dueAt: 'next_attempt_at',
});

export const claimDueEvents = (tx: Tx, holder: string, now: Date, leaseUntil: Date, limit: number) =>
  QUEUE.claim(tx, { holder, now, leaseUntil, limit });

/** Gives an event of a paused stream back unattempted, due again at `until`. */
export const postponeEvent = (q: Queryable, e: ClaimedItem, holder: string, until: Date) =>
  QUEUE.release(q, e, holder, until, until);

export interface EventAttempt {
  state: 'delivered' | 'retrying' | 'failed';
  nextAttemptAt: Date | null;
  status: number | null;
  category: string;
  at: Date;
}

export function endEventAttempt(db: Db, e: ClaimedItem, holder: string, a: EventAttempt): Promise<boolean> {
  return db.tx(async (tx) => {
    if (!(await QUEUE.lockClaimed(tx, e, holder))) return false;
    await tx.query(
      `update ssf_events set state = $3, next_attempt_at = coalesce($4, next_attempt_at), locked_by = null,
         locked_until = null, last_attempt_at = $5, last_status = $6, last_category = $7,
         finished_at = case when $3 in ('delivered', 'failed') then $5 else finished_at end
        where realm_id = $1 and id = $2`,
      [e.realm_id, e.id, a.state, a.nextAttemptAt, a.at, a.status, a.category],
    );
    return true;
  });
}

/** A stream and its realm's name, as the deliverer needs them. */
export const findStreamForDelivery = (q: Queryable, realmId: string, streamId: string) =>
  maybeOne<StreamRow & { realm_name: string }>(
    q,
    `select s.*, r.name as realm_name from ssf_streams s join realms r on r.id = s.realm_id
      where s.realm_id = $1 and s.id = $2`,
    [realmId, streamId],
  );

/**
 * Retention (document 2, Data lifecycle 3): events still undelivered `expireBefore` expire; events
 * finished `deleteBefore` are deleted. At most `limit` rows each.
 */
export async function expireAndDeleteEvents(
  q: Queryable,
  expireBefore: Date,
  deleteBefore: Date,
  now: Date,
  limit: number,
): Promise<{ expired: number; deleted: number }> {
  const expired = await q.query(
    `update ssf_events set state = 'expired', finished_at = $2, locked_by = null, locked_until = null
      where (realm_id, id) in (select realm_id, id from ssf_events
        where state in ('pending', 'retrying') and created_at < $1 limit $3)`,
    [expireBefore, now, limit],
  );
  const deleted = await q.query(
    `delete from ssf_events where (realm_id, id) in (
       select realm_id, id from ssf_events where finished_at < $1 limit $2)`,
    [deleteBefore, limit],
  );
  return { expired: expired.rowCount, deleted: deleted.rowCount };
}
