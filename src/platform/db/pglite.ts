// Embedded driver: PostgreSQL compiled to wasm, in-process. One backend serializes every query,
// so a transaction blocks the whole process: keep transactions short.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, types } from '@electric-sql/pglite';
import type { Db, QueryResult, Tx } from './db.ts';
import { acquireDirLock, type DirLock } from './dir-lock.ts';
import { toDatabaseError } from './pg-errors.ts';
import { withRetry } from './tx-retry.ts';

export interface PgliteOptions {
  /** Directory holding the data; absent means an in-memory database. */
  dataDir?: string;
  /** A dumped data directory to start from (test templates). */
  loadDataDir?: Blob;
}

// int8 as string, as node-postgres returns it, so callers see one type whatever the driver.
const parsers = { [types.INT8]: (v: string) => v };

export async function openPglite(opts: PgliteOptions): Promise<Db & { dump(): Promise<Blob> }> {
  let lock: DirLock | null = null;
  let pgdata: string | undefined;
  if (opts.dataDir) {
    lock = acquireDirLock(opts.dataDir);
    pgdata = join(opts.dataDir, 'pgdata');
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  }
  let db: PGlite;
  try {
    db = await PGlite.create({
      ...(pgdata ? { dataDir: pgdata } : {}),
      ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
      parsers,
    });
  } catch (e) {
    lock?.release();
    throw e;
  }

  // PGlite reports affectedRows 0 for a SELECT; node-postgres counts the returned rows there.
  const toResult = <R>(r: { rows: unknown[]; affectedRows?: number }): QueryResult<R> => ({
    rows: r.rows as R[],
    rowCount: Math.max(r.affectedRows ?? 0, r.rows.length),
  });

  // The embedded database has no network to lose, but it can be closed under a running request
  // (shutdown) or time out a statement: those become the same DatabaseUnavailable as on PostgreSQL.
  const guarded = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (e) {
      throw toDatabaseError(e);
    }
  };

  return {
    kind: 'pglite',
    query: (sql, params) =>
      guarded(async () => toResult(await db.query(sql, params as unknown[] | undefined))),
    tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      return guarded(() =>
        withRetry(() =>
          db.transaction(async (t) =>
            fn({
              query: async (sql, params) => toResult(await t.query(sql, params as unknown[] | undefined)),
              exec: async (script) => {
                await t.exec(script);
              },
            }),
          ),
        ),
      );
    },
    exec: (script) =>
      guarded(async () => {
        await db.exec(script);
      }),
    // The embedded database's notifications stay inside this process; only closing it ends them,
    // and a closed database answers every later statement with the fault anyway.
    listen: (channel, onNotify) =>
      guarded(async () => {
        const stop = await db.listen(channel, onNotify);
        return async () => {
          if (!db.closed) await stop();
        };
      }),
    async close() {
      try {
        await db.close();
      } finally {
        lock?.release();
      }
    },
    dump: () => db.dumpDataDir('none'),
  };
}
