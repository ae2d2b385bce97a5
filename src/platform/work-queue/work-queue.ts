// One work-queue protocol for every table the worker drains (jobs, notifications, webhook
// deliveries, the outbox). A queue is a table keyed by (realm_id, id); this module owns how its
// items are taken and given back, and each queue keeps its own table, states and final updates.
//
// - Claim: one statement picks the oldest due items with FOR UPDATE SKIP LOCKED, so concurrent
//   workers take different items and never wait on each other, and marks them leased to a holder
//   (locked_by, locked_until) with the attempt counted (attempts). An item whose lease ran out
//   (its worker died) is due again: another worker takes it over.
// - The lease: (locked_by, attempts) identifies one claim. A worker ends its attempt only after
//   lockClaimed() found that claim still current under the row lock, in the transaction that writes
//   the outcome; a worker whose lease was taken over, even by itself in a later claim, commits
//   nothing.
// - Fairness across tenants (organizations; items without one count per realm or not at all):
//   at most `share` items of one tenant per claim, or at most `share` under live leases at once.
//   Claims of a queue with the second kind are serialized by a transaction-scoped advisory lock, so
//   each counts the leases the others committed.
// - The restore marker: no claim takes anything while it is set (platform/restore-marker.ts).
// - Queues without leases (the outbox) claim for the length of a transaction: the rows stay locked
//   until it commits with its outcome, or roll back to be taken again.
//
// Backoff, jitter and when to give up are pure rules in ./retry.ts. The SQL below is built once per
// queue from its definition, whose names are constants of the code, never input.
import type { Queryable, Tx } from '../db/db.ts';
import { NO_RESTORE_MARKER } from '../restore-marker.ts';

export interface Fairness {
  /** Column naming the organization an item belongs to. */
  readonly column: string;
  /** 'per_claim': at most `share` items of one tenant in one claim (a burst cannot fill a batch);
   * 'leased': at most `share` items of one tenant under live leases at once, across all workers. */
  readonly limit: 'per_claim' | 'leased';
  /** Items without an organization: one tenant per realm, or outside the limit. */
  readonly unowned: 'per_realm' | 'exempt';
}

export interface QueueDefinition {
  readonly table: string;
  /** SQL condition over the table's columns: the item waits for an attempt. */
  readonly waiting: string;
  /** Column: when a waiting item is due. */
  readonly dueAt: string;
  /**
   * For queues whose claim moves the item to a state of its own (`running`, `sending`): that
   * state, and the waiting state an item given back returns to. Without it, only the lease marks a
   * claimed item and its state stays a waiting one.
   */
  readonly claimed?: { readonly state: string; readonly releasedTo: string };
  /** Column set to the clock reading at every claim and release (`updated_at`). */
  readonly touched?: string;
  /** More assignments at each claim; `{now}` stands for the clock reading. */
  readonly onClaim?: string;
  readonly fairness?: Fairness;
}

/** What identifies one claim of an item. */
export interface ClaimedItem {
  readonly realm_id: string;
  readonly id: string;
  readonly attempts: number;
}

export interface Claim {
  holder: string;
  now: Date;
  leaseUntil: Date;
  limit: number;
  /** The fairness share; required by a queue with fairness. */
  share?: number;
}

export interface WorkQueue<R extends ClaimedItem> {
  /** Takes up to `limit` due items for `holder` until `leaseUntil`. Call it inside a transaction. */
  claim(tx: Tx, c: Claim): Promise<R[]>;
  /** The item under its row lock, if this claim of it is still the current one; else null. */
  lockClaimed(tx: Tx, item: ClaimedItem, holder: string): Promise<R | null>;
  /** Extends the lease while this claim is current; false once it is not. */
  renew(q: Queryable, item: ClaimedItem, holder: string, until: Date): Promise<boolean>;
  /**
   * Gives a claimed item back untried, due at `dueAt`, its attempt not counted (a worker that
   * cannot handle it now); false when the claim was no longer current.
   */
  release(q: Queryable, item: ClaimedItem, holder: string, dueAt: Date, now: Date): Promise<boolean>;
  /** Seconds the oldest due item has waited (a lapsed lease counts from its end); 0 when none. */
  oldestDueSeconds(q: Queryable, now: Date): Promise<number>;
}

/** SQL of "the item is due at $now": waiting and due, or leased by a lease that ran out. */
function dueCondition(d: QueueDefinition, now: string): string {
  const waiting = `((${d.waiting}) and ${d.dueAt} <= ${now} and (locked_until is null or locked_until <= ${now}))`;
  return d.claimed ? `(${waiting} or (state = '${d.claimed.state}' and locked_until <= ${now}))` : waiting;
}

/**
 * SQL of the state a leased row is in: the claimed state, or a waiting one (the queue's `waiting`
 * condition, whose names resolve to the innermost table, `alias` included).
 */
function heldState(d: QueueDefinition, alias: string | null): string {
  if (d.claimed) return `${alias ? `${alias}.` : ''}state = '${d.claimed.state}'`;
  return `(${d.waiting})`;
}

/** SQL expressions of the candidate `c`: its tenant, whether it is exempt, its tenant's live leases. */
function fairnessSql(d: QueueDefinition): { tenant: string; exempt: string; live: string } {
  const f = d.fairness;
  if (!f) return { tenant: "''", exempt: 'true', live: '0' };
  const same =
    f.unowned === 'exempt'
      ? `o.${f.column} = c.${f.column}`
      : `coalesce(o.${f.column}, '') = coalesce(c.${f.column}, '')`;
  return {
    tenant: `coalesce(c.${f.column}, '')`,
    exempt: f.unowned === 'exempt' ? `c.${f.column} is null` : 'false',
    live:
      f.limit === 'leased'
        ? `(select count(*) from ${d.table} o
             where o.realm_id = c.realm_id and ${same} and o.locked_until > $2 and ${heldState(d, 'o')})`
        : '0',
  };
}

// $1 holder, $2 now, $3 lease until, $4 limit, $5 share.
function claimSql(d: QueueDefinition): string {
  const f = fairnessSql(d);
  const sets = [
    'locked_by = $1',
    'locked_until = $3',
    'attempts = q.attempts + 1',
    ...(d.claimed ? [`state = '${d.claimed.state}'`] : []),
    ...(d.touched ? [`${d.touched} = $2`] : []),
    ...(d.onClaim ? [d.onClaim.replaceAll('{now}', '$2')] : []),
  ].join(', ');
  // A leased-share queue leaves tenants at their share out of the window, so they cannot crowd
  // others out of it; a per-claim share looks at a wider window to pick fairly from.
  const eligible = d.fairness?.limit === 'leased' ? `and (${f.exempt} or ${f.live} < $5::int)` : '';
  const window = d.fairness ? '$4 * 4' : '$4';
  return `with candidates as (
      select c.realm_id, c.id, c.${d.dueAt} as due_at, ${f.tenant} as tenant, ${f.exempt} as exempt,
             ${f.live} as live
        from ${d.table} c
       where ${dueCondition(d, '$2')} ${eligible} and ${NO_RESTORE_MARKER}
       order by c.${d.dueAt}, c.id
       limit ${window}
       for update of c skip locked),
    ranked as (
      select realm_id, id, due_at, exempt, live,
             row_number() over (partition by realm_id, tenant order by due_at, id) as rank
        from candidates),
    chosen as (
      select realm_id, id from ranked
       where exempt or live + rank <= $5::int
       order by due_at, id
       limit $4)
    update ${d.table} q set ${sets}
      from chosen where q.realm_id = chosen.realm_id and q.id = chosen.id
    returning q.*`;
}

/** The condition of a row still held by the claim ($3 holder, $4 attempts). */
function heldBy(d: QueueDefinition): string {
  return `realm_id = $1 and id = $2 and locked_by = $3 and attempts = $4 and ${heldState(d, null)}`;
}

export function defineQueue<R extends ClaimedItem>(d: QueueDefinition): WorkQueue<R> {
  const claim = claimSql(d);
  const lock = `select * from ${d.table} where ${heldBy(d)} for update`;
  const renew = `update ${d.table} set locked_until = $5 where ${heldBy(d)}`;
  const release = `update ${d.table} set attempts = greatest(attempts - 1, 0), ${d.dueAt} = $5,
      locked_by = null, locked_until = null${d.claimed ? `, state = '${d.claimed.releasedTo}'` : ''}${
        d.touched ? `, ${d.touched} = $6` : ''
      }
    where ${heldBy(d)}`;
  const oldest = `select min(greatest(${d.dueAt}, coalesce(locked_until, ${d.dueAt}))) as due from ${d.table}
     where ${dueCondition(d, '$1')}`;
  const fairShare = d.fairness !== undefined;
  const serialized = d.fairness?.limit === 'leased';
  const key = (item: ClaimedItem, holder: string) => [item.realm_id, item.id, holder, item.attempts];

  return {
    async claim(tx, c) {
      if (fairShare && c.share === undefined) throw new Error(`${d.table}: a claim needs the fairness share`);
      if (serialized) await tx.query('select pg_advisory_xact_lock(hashtext($1))', [`work-queue ${d.table}`]);
      const r = await tx.query<R>(claim, [c.holder, c.now, c.leaseUntil, c.limit, c.share ?? null]);
      return r.rows;
    },
    async lockClaimed(tx, item, holder) {
      const r = await tx.query<R>(lock, key(item, holder));
      return r.rows[0] ?? null;
    },
    async renew(q, item, holder, until) {
      return (await q.query(renew, [...key(item, holder), until])).rowCount === 1;
    },
    async release(q, item, holder, dueAt, now) {
      const params = [...key(item, holder), dueAt, ...(d.touched ? [now] : [])];
      return (await q.query(release, params)).rowCount === 1;
    },
    async oldestDueSeconds(q, now) {
      const r = await q.query<{ due: Date | null }>(oldest, [now]);
      const due = r.rows[0]?.due;
      return due ? Math.max(0, Math.floor((now.getTime() - new Date(due).getTime()) / 1000)) : 0;
    },
  };
}

/** A queue without leases (the outbox): pending rows, oldest first, held by the claiming transaction. */
export interface TransactionQueueDefinition {
  readonly table: string;
  /** SQL condition: the row waits to be handled. */
  readonly pending: string;
  /** The order to handle rows in (`occurred_at, id`). */
  readonly order: string;
}

/**
 * Locks up to `limit` pending rows for this transaction, skipping rows another one holds; they are
 * handled and marked done in the same transaction, or come back if it rolls back.
 */
export async function claimForTransaction<R>(
  tx: Tx,
  d: TransactionQueueDefinition,
  limit: number,
): Promise<R[]> {
  const r = await tx.query<R>(
    `select * from ${d.table} where (${d.pending}) and ${NO_RESTORE_MARKER}
      order by ${d.order} limit $1 for update skip locked`,
    [limit],
  );
  return r.rows;
}
