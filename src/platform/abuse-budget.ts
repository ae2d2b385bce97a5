// Abuse budgets shared by every process (table abuse_counters): a counter per bucket and fixed
// window. A budget of at most SHARD_ABOVE lives on one row and is exact; a larger (hot) one is
// spread over SHARDS rows so concurrent requests mostly update different rows, and its count is
// the sum of the shards. One statement spends on several buckets at once.
// For the token endpoint, a process reserves budget in blocks (`BlockLease`) so most requests
// touch no row at all.
import { randomInt } from 'node:crypto';
import type { Companion } from './db/companions.ts';
import type { Queryable } from './db/db.ts';

const SHARDS = 8;
/** Budgets up to this limit stay on one row (exact); larger ones are hot enough to shard. */
const SHARD_ABOVE = 1000;

const shardFor = (b: Budget): number => (b.limit > SHARD_ABOVE ? randomInt(SHARDS) : 0);

export interface Budget {
  bucket: string;
  limit: number;
  windowMs: number;
}

export type BudgetVerdict =
  | { ok: true }
  | {
      ok: false;
      retryAfterSeconds: number /** The buckets that had no room (spendBudgets). */;
      refused?: string[];
    };

const windowStart = (now: Date, windowMs: number) =>
  new Date(Math.floor(now.getTime() / windowMs) * windowMs);

function retryAfter(now: Date, windowMs: number): number {
  const end = windowStart(now, windowMs).getTime() + windowMs;
  return Math.max(1, Math.ceil((end - now.getTime()) / 1000));
}

/**
 * Adds `cost` to each budget and says whether all of them still had room before this spend. A
 * refused request spends too; a window's count never outlives the window.
 */
export async function spendBudgets(
  q: Queryable,
  budgets: readonly Budget[],
  now: Date,
  cost = 1,
): Promise<BudgetVerdict> {
  const live = budgets.filter((b) => b.limit > 0);
  if (live.length === 0) return { ok: true };
  const before = await countsBefore(q, live, now, cost);
  let worst: number | null = null;
  const refused: string[] = [];
  for (const b of live) {
    if ((before.get(b.bucket) ?? 0) + cost > b.limit) {
      worst = Math.max(worst ?? 0, retryAfter(now, b.windowMs));
      refused.push(b.bucket);
    }
  }
  return worst === null ? { ok: true } : { ok: false, retryAfterSeconds: worst, refused };
}

/** Adds `cost` to each budget in one statement; each bucket's count before this spend. */
async function countsBefore(
  q: Queryable,
  live: readonly Budget[],
  now: Date,
  cost: number,
): Promise<Map<string, number>> {
  // The upsert returns its row's new count under the row lock, so a budget kept on one row is
  // exact under any concurrency; a sharded one adds the other shards as they were at the start.
  const r = await q.query<{ bucket: string; before: number }>(
    `with input as (
       select * from unnest($1::text[], $2::timestamptz[], $3::int[]) as i(bucket, window_start, shard)
     ), up as (
       insert into abuse_counters (bucket, window_start, shard, hits)
       select bucket, window_start, shard, $4 from input
       on conflict (bucket, window_start, shard) do update set hits = abuse_counters.hits + excluded.hits
       returning bucket, shard, hits
     )
     select i.bucket, (up.hits - $4 + coalesce((select sum(c.hits) from abuse_counters c
              where c.bucket = i.bucket and c.window_start = i.window_start and c.shard <> i.shard), 0))::int as before
       from input i join up on up.bucket = i.bucket`,
    [live.map((b) => b.bucket), live.map((b) => windowStart(now, b.windowMs)), live.map(shardFor), cost],
  );
  return new Map(r.rows.map((row) => [row.bucket, Number(row.before)]));
}

/**
 * spendBudgets of one budget as a statement to join to a change's own write
 * (platform/db/companions.ts), for a change that gives attempts back: it says nothing about room.
 */
export const budgetAdjustment = (b: Budget, now: Date, cost: number): Companion => ({
  sql: `insert into abuse_counters (bucket, window_start, shard, hits) values ($1, $2, $3, $4)
     on conflict (bucket, window_start, shard) do update set hits = abuse_counters.hits + excluded.hits`,
  params: [b.bucket, windowStart(now, b.windowMs), shardFor(b), cost],
});

/** Deletes the counters of windows that ended before `before`. */
export async function pruneBudgets(q: Queryable, before: Date): Promise<number> {
  const r = await q.query('delete from abuse_counters where window_start < $1', [before]);
  return r.rowCount ?? 0;
}

/**
 * Budget reserved in blocks per process: a request takes one unit from the local block and only
 * an empty block spends (a whole block) in the shared table. A process may thus hold up to one
 * block more than it used when the window ends; the block is small against the limit.
 */
export class BlockLease {
  readonly #left = new Map<string, { window: number; left: number; refused: number | null }>();

  async take(q: Queryable, b: Budget, now: Date): Promise<BudgetVerdict> {
    if (b.limit <= 0) return { ok: true };
    const window = windowStart(now, b.windowMs).getTime();
    const held = this.#left.get(b.bucket);
    if (held && held.window === window) {
      if (held.left > 0) {
        held.left--;
        return { ok: true };
      }
      if (held.refused !== null) return { ok: false, retryAfterSeconds: retryAfter(now, b.windowMs) };
    }
    const block = Math.max(1, Math.floor(b.limit / 50));
    const verdict = await spendBudgets(q, [b], now, block);
    if (this.#left.size > 10_000) this.#left.clear();
    this.#left.set(b.bucket, {
      window,
      left: verdict.ok ? block - 1 : 0,
      refused: verdict.ok ? null : window,
    });
    return verdict;
  }
}

/**
 * Budgets that count failures only (the token endpoint's, docs/security.md): a success writes
 * nothing and reads nothing. Before its work a request asks `refusal`, which looks only at what
 * this process knows: the buckets that a failure counted here found spent in the current window
 * (the shared count includes every process's failures). A failure spends one on each of its
 * budgets in one statement and answers as refused when one was already spent before it, so even
 * concurrent failures get exactly `limit` ordinary answers per window. Another process may check
 * one more failing request per bucket and window before its own count tells it the budget is spent.
 */
export class FailureBudgets {
  readonly #spent = new Map<string, number>();

  /** Whether this process knows of any spent budget at all (most of the time it does not). */
  get anySpent(): boolean {
    return this.#spent.size > 0;
  }

  /** Refused when this process knows one of the budgets to be spent in its current window. */
  refusal(budgets: readonly Budget[], now: Date): BudgetVerdict {
    let worst: number | null = null;
    for (const b of budgets) {
      if (b.limit <= 0 || this.#spent.get(b.bucket) !== windowStart(now, b.windowMs).getTime()) continue;
      worst = Math.max(worst ?? 0, retryAfter(now, b.windowMs));
    }
    return worst === null ? { ok: true } : { ok: false, retryAfterSeconds: worst };
  }

  /** Counts one failure on each budget; refused when one of them was spent before this failure. */
  async fail(q: Queryable, budgets: readonly Budget[], now: Date): Promise<BudgetVerdict> {
    const live = budgets.filter((b) => b.limit > 0);
    if (live.length === 0) return { ok: true };
    const before = await countsBefore(q, live, now, 1);
    if (this.#spent.size > 10_000) this.#spent.clear(); // bounded: client ids come from requests
    let worst: number | null = null;
    for (const b of live) {
      const count = before.get(b.bucket) ?? 0;
      if (count + 1 >= b.limit) this.#spent.set(b.bucket, windowStart(now, b.windowMs).getTime());
      if (count >= b.limit) worst = Math.max(worst ?? 0, retryAfter(now, b.windowMs));
    }
    return worst === null ? { ok: true } : { ok: false, retryAfterSeconds: worst };
  }
}
