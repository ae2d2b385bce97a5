// Race tests on PostgreSQL that must not depend on timing: a transaction held open at a chosen point
// while other work runs, and a way to wait until that other work is really blocked on a lock.
import { EventEmitter, once } from 'node:events';
import type { Db, Tx } from '../../src/platform/db/db.ts';

export interface HeldTransaction {
  /** Lets the held transaction commit; answers once it has. */
  commit(): Promise<void>;
}

/** Runs `work` in a transaction that stays open after it, until commit() is called. */
export async function holdOpen(db: Db, work: (tx: Tx) => Promise<unknown>): Promise<HeldTransaction> {
  const written = new EventEmitter();
  const release = new EventEmitter();
  const committed = db.tx(async (tx) => {
    await work(tx);
    written.emit('done');
    await once(release, 'commit');
  });
  await Promise.race([once(written, 'done'), committed]);
  return {
    commit: () => {
      release.emit('commit');
      return committed;
    },
  };
}

/** Waits until at least `n` sessions of this database wait for a lock (PostgreSQL only). */
export async function untilLockWaiters(db: Db, n: number, limitMs = 20_000): Promise<void> {
  const end = Date.now() + limitMs;
  for (;;) {
    const r = await db.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (Number(r.rows[0]?.n ?? 0) >= n) return;
    if (Date.now() > end) throw new Error(`fewer than ${n} sessions waited for a lock within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
