// A counting decorator around the database port for tests that measure how many SQL statements a
// request costs. It counts what the process sends, the way bench/run.ts counts with
// pg_stat_statements: every statement, a transaction's `begin` and `commit` (or `rollback`) each one.
import type { Db, Queryable, QueryResult, Tx } from '../../src/platform/db/db.ts';

export interface StatementLog {
  /** The statements sent since the last `take()`, in order (SQL text, whitespace folded). */
  take(): string[];
}

const folded = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** `db` with every statement recorded in the returned log; the harness passes it to the app. */
export function countingDb(db: Db): { db: Db; log: StatementLog } {
  let seen: string[] = [];
  const note = (sql: string) => {
    seen.push(folded(sql));
  };
  const counted =
    <Q extends Queryable>(q: Q) =>
    <R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> => {
      note(sql);
      return q.query<R>(sql, params);
    };
  const wrapped: Db = {
    kind: db.kind,
    query: counted(db),
    tx: async <T>(fn: (tx: Tx) => Promise<T>) => {
      // A retried transaction (serialization failure) runs fn again: each attempt is counted.
      return db.tx(async (inner) => {
        note('begin');
        let done = false;
        try {
          const result = await fn({ query: counted(inner), exec: (script) => inner.exec(script) });
          done = true;
          return result;
        } finally {
          note(done ? 'commit' : 'rollback');
        }
      });
    },
    exec: (script) => db.exec(script),
    close: () => db.close(),
    ...(db.listen ? { listen: db.listen.bind(db) } : {}),
  };
  return {
    db: wrapped,
    log: {
      take: () => {
        const out = seen;
        seen = [];
        return out;
      },
    },
  };
}
