// node-postgres driver: a pool per process; transactions hold one pooled client.
import pg from 'pg';
import type { Db, QueryResult, Tx } from './db.ts';
import { withRetry } from './tx-retry.ts';

export interface PgOptions {
  url: string;
  maxConns: number;
  statementTimeoutMs: number;
  applicationName?: string;
}

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
    connectionTimeoutMillis: 5000,
    // Idle pooled connections alone never keep a process alive (CLI commands, test files).
    allowExitOnIdle: true,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});

  const names = new StatementNames();
  const run = async <R>(
    q: pg.Pool | pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<R>> => {
    const name = params && params.length > 0 ? names.of(sql) : undefined;
    const r = await q.query({
      text: sql,
      values: params as unknown[] | undefined,
      ...(name ? { name } : {}),
    });
    return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
  };

  return {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      return withRetry(async () => {
        const client = await pool.connect();
        let broken = false;
        try {
          await client.query('begin');
          const result = await fn({
            query: (sql, params) => run(client, sql, params),
            exec: async (script) => {
              await client.query(script);
            },
          });
          await client.query('commit');
          return result;
        } catch (e) {
          try {
            await client.query('rollback');
          } catch {
            broken = true;
          }
          throw e;
        } finally {
          client.release(broken);
        }
      });
    },
    async exec(script) {
      await pool.query(script);
    },
    close: () => pool.end(),
  };
}
