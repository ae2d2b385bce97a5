// SQL of the session-event stream (migrations/0036_session_events.sql): a page after a position,
// where the stream was pruned to, and the retention clean-up. Events are written by the database
// itself, in the transaction of each revocation, never from here.
import type { Queryable } from '../platform/db/db.ts';

export interface SessionEventRow {
  seq: string;
  type: string;
  data: unknown;
  created_at: Date;
}

/** At most `limit` events of the realm after position `after` (0: from the oldest kept), oldest first. */
export async function readSessionEvents(
  q: Queryable,
  realmId: string,
  after: string,
  limit: number,
): Promise<SessionEventRow[]> {
  const r = await q.query<SessionEventRow>(
    `select seq, type, data, created_at from session_events
      where realm_id = $1 and seq > $2::bigint order by seq limit $3`,
    [realmId, after, limit],
  );
  return r.rows;
}

export interface StreamBounds {
  /** The highest position pruned from this realm's stream ('0' when nothing was). */
  prunedThrough: string;
  /** The highest position handed out in this database ('0' before the first event). */
  head: string;
}

export async function streamBounds(q: Queryable, realmId: string): Promise<StreamBounds> {
  const r = await q.query<{ pruned_through: string | null; head: string }>(
    `select (select pruned_through from session_event_horizons where realm_id = $1) as pruned_through,
            (select case when is_called then last_value else 0 end from session_events_seq) as head`,
    [realmId],
  );
  const row = r.rows[0];
  return { prunedThrough: String(row?.pruned_through ?? '0'), head: String(row?.head ?? '0') };
}

/**
 * Deletes up to `limit` events created before `before` and moves each affected realm's horizon to
 * the highest position deleted, in one transaction with the delete. Returns how many went.
 */
export async function pruneSessionEvents(q: Queryable, before: Date, limit: number): Promise<number> {
  const r = await q.query<{ n: string }>(
    `with gone as (
       delete from session_events where (realm_id, seq) in (
         select realm_id, seq from session_events where created_at < $1 order by created_at limit $2)
       returning realm_id, seq),
     horizons as (
       insert into session_event_horizons (realm_id, pruned_through)
       select realm_id, max(seq) from gone group by realm_id
       on conflict (realm_id) do update
         set pruned_through = greatest(session_event_horizons.pruned_through, excluded.pruned_through))
     select count(*) as n from gone`,
    [before, limit],
  );
  return Number(r.rows[0]?.n ?? 0);
}
