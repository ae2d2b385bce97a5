// SQL of back-channel logout deliveries (migrations/0040_backchannel_logout.sql). Rows are queued
// by the database itself when a session ends; this module claims them under a lease (a work queue
// of platform/work-queue, as webhook deliveries are), ends attempts while the lease is current,
// and deletes old rows.
import { type Db, deleteBatch, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { type ClaimedItem, defineQueue } from '../platform/work-queue/work-queue.ts';

export type LogoutDeliveryState = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface LogoutDeliveryRow {
  realm_id: string;
  /** Also the logout token's jti. */
  id: string;
  client_id: string;
  user_id: string;
  session_id: string;
  state: LogoutDeliveryState;
  attempts: number;
  next_attempt_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  last_attempt_at: Date | null;
  last_status: number | null;
  last_category: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

const QUEUE = defineQueue<LogoutDeliveryRow>({
  table: 'backchannel_logout_deliveries',
  waiting: `state in ('pending', 'retrying')`,
  dueAt: 'next_attempt_at',
});

export const claimDueLogouts = (
  tx: Tx,
  holder: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<LogoutDeliveryRow[]> => QUEUE.claim(tx, { holder, now, leaseUntil, limit });

export interface LogoutAttempt {
  state: LogoutDeliveryState;
  nextAttemptAt: Date | null;
  status: number | null;
  category: string;
  at: Date;
}

/** Ends the attempt if this holder's claim of it is still the current one; false otherwise. */
export function endLogoutAttempt(db: Db, d: ClaimedItem, holder: string, a: LogoutAttempt): Promise<boolean> {
  return db.tx(async (tx) => {
    if (!(await QUEUE.lockClaimed(tx, d, holder))) return false;
    await tx.query(
      `update backchannel_logout_deliveries set state = $3, next_attempt_at = coalesce($4, next_attempt_at),
         locked_by = null, locked_until = null, last_attempt_at = $5, last_status = $6, last_category = $7,
         delivered_at = case when $3 = 'delivered' then $5 else delivered_at end
        where realm_id = $1 and id = $2`,
      [d.realm_id, d.id, a.state, a.nextAttemptAt, a.at, a.status, a.category],
    );
    return true;
  });
}

/** Where a delivery goes now: the client's current URI (null once removed or disabled), and the realm. */
export interface LogoutTarget {
  realm_name: string;
  backchannel_logout_uri: string | null;
}

export const findLogoutTarget = (q: Queryable, realmId: string, clientId: string) =>
  maybeOne<LogoutTarget>(
    q,
    `select r.name as realm_name,
            case when c.state = 'active' then c.backchannel_logout_uri end as backchannel_logout_uri
       from realms r left join clients c on c.realm_id = r.id and c.client_id = $2
      where r.id = $1`,
    [realmId, clientId],
  );

/** Deliveries of a realm (newest first), for tests and operators. */
export async function listLogoutDeliveries(q: Queryable, realmId: string): Promise<LogoutDeliveryRow[]> {
  const r = await q.query<LogoutDeliveryRow>(
    'select * from backchannel_logout_deliveries where realm_id = $1 order by created_at desc, id',
    [realmId],
  );
  return r.rows;
}

/** privacy.history_retention after creation (document 2, Data lifecycle 3). */
export const deleteLogoutDeliveriesBefore = (q: Queryable, cutoff: Date, limit: number): Promise<number> =>
  deleteBatch(q, 'backchannel_logout_deliveries', 'created_at < $1', cutoff, limit);
