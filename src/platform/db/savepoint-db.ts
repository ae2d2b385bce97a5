// A Db whose transactions are savepoints of one already open: a use case that opens its own
// transaction (db.tx, inChange) runs inside the caller's, and when it throws only its own writes
// are rolled back, leaving the caller's transaction usable (joined-tx.ts rolls back the whole).
import type { Db, Tx } from './db.ts';

export function savepointDb(tx: Tx, kind: Db['kind']): Db {
  let depth = 0;
  return {
    kind,
    query: (sql, params) => tx.query(sql, params),
    async tx(fn) {
      const name = `nested_${++depth}`;
      await tx.query(`savepoint ${name}`);
      try {
        const out = await fn(tx);
        await tx.query(`release savepoint ${name}`);
        return out;
      } catch (e) {
        await tx.query(`rollback to savepoint ${name}`);
        throw e;
      } finally {
        depth--;
      }
    },
    exec: (script) => tx.exec(script),
    close: () => Promise.reject(new Error('a joined transaction is closed by its owner')),
  };
}
