// The one database interface domain code sees. Two drivers implement it (pg.ts, pglite.ts) with
// the same SQL, so PostgreSQL in production and PGlite in the embedded default never diverge.

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
}

/** A handle valid only inside `Db.tx`; never mix it with the outer Db (PGlite deadlocks). */
export interface Tx extends Queryable {
  /** Multi-statement script without parameters, inside the transaction (migrations only). */
  exec(script: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs fn in one transaction; a serialization failure or deadlock is retried once. */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Multi-statement scripts without parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * LISTEN on `channel` until the returned function is called: `onNotify` gets each payload
   * (delivered at commit), `onLoss` the fault that ended the listening (notifications may have
   * been missed since, so the caller re-reads what it watches). Absent on test doubles.
   */
  listen?(
    channel: string,
    onNotify: (payload: string) => void,
    onLoss: (e: Error) => void,
  ): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export async function one<R>(q: Queryable, sql: string, params?: readonly unknown[]): Promise<R> {
  const r = await q.query<R>(sql, params);
  const row = r.rows[0];
  if (r.rows.length !== 1 || row === undefined) throw new Error(`expected one row, got ${r.rows.length}`);
  return row;
}

export async function maybeOne<R>(q: Queryable, sql: string, params?: readonly unknown[]): Promise<R | null> {
  const r = await q.query<R>(sql, params);
  return r.rows[0] ?? null;
}

export async function many<R>(q: Queryable, sql: string, params?: readonly unknown[]): Promise<R[]> {
  return (await q.query<R>(sql, params)).rows;
}

/**
 * Deletes at most `limit` rows of a realm-keyed table (primary key realm_id, id) matching
 * `condition`, whose one parameter is $1: a retention clean-up in bounded batches. `table` and
 * `condition` are constants of the caller, never input.
 */
export async function deleteBatch(
  q: Queryable,
  table: string,
  condition: string,
  value: unknown,
  limit: number,
): Promise<number> {
  const r = await q.query(
    `delete from ${table} where (realm_id, id) in (
       select realm_id, id from ${table} where ${condition} limit $2)`,
    [value, limit],
  );
  return r.rowCount;
}

/** A json/jsonb column's value: node-postgres parses it, PGlite may hand it over as text. */
export const jsonColumn = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
