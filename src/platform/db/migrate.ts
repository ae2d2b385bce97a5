// Forward-only schema migrations: numbered plain SQL files in migrations/, each applied in its own
// transaction and recorded with a checksum, so an edited or unknown migration is reported.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db, Queryable } from './db.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface SchemaState {
  current: boolean;
  applied: number[];
  pending: number[];
  /** Applied migrations this code does not know (the database is newer than the code). */
  unknown: number[];
  /** Applied migrations whose file changed since. */
  changed: number[];
}

// src/platform/db and dist/platform/db both sit three levels below the package root.
export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'migrations');

// Any fixed number works; it only has to be the same in every process of this application.
const ADVISORY_LOCK_KEY = 4_181_070_553;

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), 'utf8');
      return {
        version: Number.parseInt(file.slice(0, 4), 10),
        name: file.slice(5, -4),
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    });
}

const ensureTable = (q: Queryable) =>
  q.query(`create table if not exists schema_migrations (
    version integer primary key,
    name text not null,
    checksum text not null,
    applied_at timestamptz not null default now())`);

export async function schemaState(db: Db, migrations = loadMigrations()): Promise<SchemaState> {
  const exists = await db.query<{ t: string | null }>(`select to_regclass('schema_migrations')::text as t`);
  const rows = exists.rows[0]?.t
    ? (
        await db.query<{ version: number; checksum: string }>(
          'select version, checksum from schema_migrations',
        )
      ).rows
    : [];
  const applied = new Map(rows.map((r) => [Number(r.version), r.checksum]));
  const known = new Map(migrations.map((m) => [m.version, m]));
  const pending = migrations.filter((m) => !applied.has(m.version)).map((m) => m.version);
  const unknown = [...applied.keys()].filter((v) => !known.has(v)).sort((a, b) => a - b);
  const changed = [...applied.entries()]
    .filter(([v, sum]) => known.has(v) && known.get(v)?.checksum !== sum)
    .map(([v]) => v);
  return {
    current: pending.length === 0 && unknown.length === 0 && changed.length === 0,
    applied: [...applied.keys()].sort((a, b) => a - b),
    pending,
    unknown,
    changed,
  };
}

/** Applies pending migrations in order; returns the versions applied. Safe to run concurrently. */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<number[]> {
  await ensureTable(db);
  const done: number[] = [];
  for (const m of migrations) {
    const applied = await db.tx(async (tx) => {
      // Serializes concurrent migrators on PostgreSQL; PGlite is single-process (directory lock).
      if (db.kind === 'postgres') await tx.query('select pg_advisory_xact_lock($1)', [ADVISORY_LOCK_KEY]);
      const seen = await tx.query<{ checksum: string }>(
        'select checksum from schema_migrations where version = $1',
        [m.version],
      );
      if (seen.rows[0]) {
        if (seen.rows[0].checksum !== m.checksum) {
          throw new Error(`migration ${m.version} (${m.name}) changed after it was applied`);
        }
        return false;
      }
      await tx.exec(m.sql);
      await tx.query('insert into schema_migrations (version, name, checksum) values ($1, $2, $3)', [
        m.version,
        m.name,
        m.checksum,
      ]);
      return true;
    });
    if (applied) done.push(m.version);
  }
  return done;
}
