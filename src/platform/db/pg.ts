// node-postgres driver: a pool per process; transactions hold one pooled client.
import pg from 'pg';
import type { Db, QueryResult, Tx } from './db.ts';
import { DatabaseUnavailable, isDatabaseFault, toDatabaseError } from './pg-errors.ts';
import { withRetry } from './tx-retry.ts';

export interface PgOptions {
  url: string;
  maxConns: number;
  statementTimeoutMs: number;
  applicationName?: string;
  /** Told about connections that fail outside any statement (idle, or between statements). */
  onConnectionError?: (e: Error) => void;
}

/**
 * How long past storage.statement_timeout the client waits for an answer before giving up on the
 * connection: the server's timeout cannot fire when the network, not the query, is slow.
 */
const READ_GRACE_MS = 1000;

/**
 * After such a failure the connection may still run the statement or be dead: rolling back on it
 * would wait behind the statement or fail, so the client is discarded instead, which also ends any
 * open transaction on the server (nothing half-written commits).
 */
const unusable = isDatabaseFault;

/**
 * Names for parameterized statements, so each pooled connection parses and plans a statement
 * once and reuses it (PostgreSQL CPU is what the hot paths spend most). The SQL in this code
 * base is a fixed set of texts; the cap only guards against a text built per call, which then
 * runs unnamed.
 */
class StatementNames {
  private readonly byText = new Map<string, string>();
  of(sql: string): string | undefined {
    const known = this.byText.get(sql);
    if (known || this.byText.size >= MAX_NAMED_STATEMENTS) return known;
    const name = `pa_${this.byText.size.toString(36)}`;
    this.byText.set(sql, name);
    return name;
  }
}

const MAX_NAMED_STATEMENTS = 1000;

export function openPostgres(opts: PgOptions): Db {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.maxConns,
    statement_timeout: opts.statementTimeoutMs,
    application_name: opts.applicationName ?? 'proudauth',
    // Every hot statement is a named, key-driven lookup: one generic plan per connection. Left to
    // choose, PostgreSQL re-plans the large live-check statement on every call (about twice its
    // execution time), because its generic estimate includes branches a call never takes.
    options: '-c plan_cache_mode=force_generic_plan',
    query_timeout: opts.statementTimeoutMs + READ_GRACE_MS,
    connectionTimeoutMillis: 5000,
    // Idle pooled connections alone never keep a process alive (CLI commands, test files).
    allowExitOnIdle: true,
  });
  // node-postgres emits 'error' on a client whose connection breaks, and an 'error' event without a
  // listener kills the process. The pool listens only while a client is idle, so every client gets
  // a listener of its own for its whole life: checked out, mid-query or idle. The failed statement
  // (if any) rejects on its own; the pool drops the client when it is released with the error.
  const onConnectionError = (e: Error) => opts.onConnectionError?.(e);
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));

  const names = new StatementNames();
  const run = async <R>(
    q: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<R>> => {
    const name = params && params.length > 0 ? names.of(sql) : undefined;
    try {
      const r = await q.query({
        text: sql,
        values: params as unknown[] | undefined,
        ...(name ? { name } : {}),
      });
      return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
    } catch (e) {
      throw toDatabaseError(e);
    }
  };

  const connect = async (): Promise<pg.PoolClient> => {
    try {
      return await pool.connect();
    } catch (e) {
      throw toDatabaseError(e);
    }
  };

  return {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      return withRetry(async () => {
        const client = await connect();
        let broken: Error | undefined;
        try {
          await run(client, 'begin');
          const result = await fn({
            query: (sql, params) => run(client, sql, params),
            exec: async (script) => {
              await run(client, script);
            },
          });
          await run(client, 'commit');
          return result;
        } catch (e) {
          if (unusable(e)) broken = e as Error;
          else {
            try {
              await client.query('rollback');
            } catch (r) {
              broken = r as Error;
            }
          }
          throw e;
        } finally {
          // Released with an error, the pool destroys the client rather than reuse it.
          client.release(broken);
        }
      });
    },
    async exec(script) {
      await run(pool, script);
    },
    listen: (channel, onNotify, onLoss) => listenOn(opts, channel, onNotify, onLoss),
    close: () => pool.end(),
  };
}

/**
 * LISTEN needs a session of its own for as long as it listens, so it takes a connection outside the
 * pool. A broken connection is reported once through onLoss; the caller listens again when it needs to.
 */
async function listenOn(
  opts: PgOptions,
  channel: string,
  onNotify: (payload: string) => void,
  onLoss: (e: Error) => void,
): Promise<() => Promise<void>> {
  if (!/^[a-z_]{1,63}$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  const client = new pg.Client({
    connectionString: opts.url,
    application_name: `${opts.applicationName ?? 'proudauth'} listener`,
    connectionTimeoutMillis: 5000,
    // A peer that vanished without a word is found by TCP keep-alive rather than never.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  let ended = false;
  const lost = (e: Error) => {
    if (ended) return;
    ended = true;
    client.end().catch(() => {});
    onLoss(e instanceof DatabaseUnavailable ? e : new DatabaseUnavailable('connection', e));
  };
  client.on('error', lost);
  client.on('end', () => lost(new Error('the listening connection ended')));
  client.on('notification', (m) => {
    if (m.channel === channel) onNotify(m.payload ?? '');
  });
  try {
    await client.connect();
    await client.query(`listen ${channel}`);
  } catch (e) {
    ended = true;
    await client.end().catch(() => {});
    throw toDatabaseError(e);
  }
  return async () => {
    if (ended) return;
    ended = true;
    await client.end().catch(() => {});
  };
}
