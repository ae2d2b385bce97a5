// Database spans (docs/deployment.md, Tracing): the database port wrapped once, so both drivers
// are traced the same way. A span names the statement's operation only (select, insert, ...):
// never its text or parameters, which may carry personal data.
import { inSpan } from '../tracing.ts';
import type { Db, Queryable, QueryResult, Tx } from './db.ts';

const OPERATION = /^\s*(?:--[^\n]*\n\s*)*([a-z]+)/i;

function traced<R>(system: string, sql: string, run: () => Promise<QueryResult<R>>): Promise<QueryResult<R>> {
  const operation = (OPERATION.exec(sql)?.[1] ?? 'statement').toLowerCase();
  return inSpan(
    `db ${operation}`,
    'client',
    { 'db.system.name': system, 'db.operation.name': operation },
    run,
  );
}

const query =
  (system: string, q: Queryable): Queryable['query'] =>
  (sql, params) =>
    traced(system, sql, () => q.query(sql, params));

/** The same Db whose statements (in and out of transactions) open client spans. */
export function tracedDb(db: Db): Db {
  const system = db.kind === 'postgres' ? 'postgresql' : 'pglite';
  const wrapped: Db = Object.create(db);
  return Object.assign(wrapped, {
    query: query(system, db),
    tx: <T>(fn: (tx: Tx) => Promise<T>) =>
      inSpan('db transaction', 'internal', { 'db.system.name': system }, () =>
        db.tx((tx) => fn(Object.assign(Object.create(tx) as Tx, { query: query(system, tx) }))),
      ),
  });
}
