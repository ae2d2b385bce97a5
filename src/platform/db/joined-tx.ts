// A Db whose transactions join one already open: a use case that opens its own transaction
// (db.tx, inChange) runs inside the caller's instead, so a composing use case (the configuration
// import) commits all of its parts or none. An error thrown by a part rolls back the whole.
import type { Db, Tx } from './db.ts';

export function joinedDb(tx: Tx, kind: Db['kind']): Db {
  return {
    kind,
    query: (sql, params) => tx.query(sql, params),
    tx: (fn) => fn(tx),
    exec: (script) => tx.exec(script),
    close: () => Promise.reject(new Error('a joined transaction is closed by its owner')),
  };
}
