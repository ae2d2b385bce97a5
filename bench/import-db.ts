// The database of the import benchmarks (bench/user-import.ts, bench/migrate-scale.ts): a scratch
// PostgreSQL database on loopback (BENCH_IMPORT_PG) or embedded PGlite, every statement counted
// at the Db interface, and the CPU time of the PostgreSQL server processes serving that database.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Db, Queryable, Tx } from '../src/platform/db/db.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { openPglite } from '../src/platform/db/pglite.ts';
import { databaseUrlFor } from '../test/harness/test-db.ts';

export interface Stats {
  statements: number;
  ms: number;
}

/** The same database, counting every statement and the time until its answer. */
export function counted(db: Db, stats: Stats): Db {
  const timed =
    (q: Queryable): Queryable['query'] =>
    async (sql, params) => {
      const t0 = performance.now();
      try {
        return await q.query(sql, params);
      } finally {
        stats.statements++;
        stats.ms += performance.now() - t0;
      }
    };
  return {
    kind: db.kind,
    query: timed(db) as Db['query'],
    exec: (s) => db.exec(s),
    close: () => db.close(),
    tx: (fn) => db.tx((tx) => fn({ query: timed(tx) as Tx['query'], exec: (s) => tx.exec(s) })),
  };
}

export interface BenchDatabase {
  db: Db;
  label: string;
  drop: () => Promise<void>;
  /**
   * CPU seconds (user + system) that the PostgreSQL backends of this database have used since the
   * last call to `resetServerCpu`, sampled from /proc every second (a backend that ends between two
   * samples loses at most its last second); null on PGlite, where the database runs in-process.
   */
  serverCpuSeconds: () => Promise<number | null>;
  resetServerCpu: () => Promise<void>;
}

/** utime + stime of a process in clock ticks (100 per second on Linux), or null once it ended. */
function ticksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

export async function openDatabase(prefix = 'pa_bench_import'): Promise<BenchDatabase> {
  const base = process.env.BENCH_IMPORT_PG;
  if (!base) {
    const db = await openPglite({});
    await migrate(db);
    const none = async () => null;
    return {
      db,
      drop: async () => {},
      label: 'embedded PGlite',
      serverCpuSeconds: none,
      resetServerCpu: async () => {},
    };
  }
  if (!/^postgres(ql)?:\/\/[^/]*@?(127\.0\.0\.1|localhost)[:/]/.test(base)) throw new Error('loopback only');
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const db = openPostgres({ url: databaseUrlFor(base, name), maxConns: 10, statementTimeoutMs: 60_000 });
  await migrate(db);
  // per backend: ticks when first seen (or at the reset) and the latest ticks seen
  const seen = new Map<number, { from: number; last: number }>();
  const sample = async () => {
    const r = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [
      name,
    ]);
    for (const { pid } of r.rows) {
      const ticks = ticksOf(pid);
      if (ticks === null) continue;
      const s = seen.get(pid);
      if (s) s.last = ticks;
      else seen.set(pid, { from: ticks, last: ticks });
    }
  };
  const timer = setInterval(() => void sample().catch(() => {}), 1000);
  return {
    db,
    label: 'PostgreSQL 15 (loopback)',
    async resetServerCpu() {
      await sample();
      for (const s of seen.values()) s.from = s.last;
    },
    async serverCpuSeconds() {
      await sample();
      let ticks = 0;
      for (const s of seen.values()) ticks += s.last - s.from;
      return ticks / 100;
    },
    drop: async () => {
      clearInterval(timer);
      await db.close();
      await admin.query(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}
