// One database per test file, cloned from a template the test runner migrated once
// (scripts/run-tests.ts): a PostgreSQL `create database ... template`, or a PGlite data-directory
// dump loaded into memory.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after } from 'node:test';
import pg from 'pg';
import type { Db } from '../../src/platform/db/db.ts';
import { migrate } from '../../src/platform/db/migrate.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';

export const TEST_DATABASE_URL = process.env.PROUDAUTH_TEST_DATABASE_URL || null;

export function databaseUrlFor(base: string, name: string): string {
  const u = new URL(base);
  u.pathname = `/${name}`;
  return u.toString();
}

async function clonePostgres(base: string, template: string): Promise<Db> {
  const name = `${template.replace(/_tmpl$/, '')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`create database "${name}" template "${template}"`);
  } finally {
    await admin.end();
  }
  return openPostgres({ url: databaseUrlFor(base, name), maxConns: 10, statementTimeoutMs: 30_000 });
}

let shared: Promise<Db> | null = null;

// A test file is one process; its database closes after the file's last test, so the process can
// exit by itself (a PGlite loaded from a dump otherwise keeps the event loop alive). Only in a test
// file's process (scripts/run-tests.ts marks them; node --test sets NODE_TEST_CONTEXT): the test
// runner script imports this module too.
// A batch of files in one process (test/harness/batch-entry.ts) closes each file's database itself.
if (
  (process.env.PROUDAUTH_TEST_FILE_PROCESS || process.env.NODE_TEST_CONTEXT) &&
  !process.env.PROUDAUTH_TEST_BATCH
) {
  after(closeFileDatabase);
}

/** Closes this file's database; the next fileDatabase() opens a new one. */
export async function closeFileDatabase(): Promise<void> {
  const db = shared;
  shared = null;
  if (db) await (await db).close();
}

/** The database of this test file (a file is one process under node:test). */
export function fileDatabase(): Promise<Db> {
  if (!shared) shared = openFileDatabase();
  return shared;
}

async function openFileDatabase(): Promise<Db> {
  const pgTemplate = process.env.PROUDAUTH_TEST_PG_TEMPLATE;
  if (TEST_DATABASE_URL && pgTemplate) return clonePostgres(TEST_DATABASE_URL, pgTemplate);
  const dump = process.env.PROUDAUTH_TEST_PGLITE_TEMPLATE;
  if (dump) return openPglite({ loadDataDir: new Blob([readFileSync(dump)]) });
  // Run outside scripts/run-tests.ts (a single file by hand): build the schema here.
  const db = TEST_DATABASE_URL
    ? openPostgres({ url: TEST_DATABASE_URL, maxConns: 10, statementTimeoutMs: 30_000 })
    : await openPglite({});
  await migrate(db);
  return db;
}

/**
 * node:test `skip` for race tests: PGlite runs one transaction at a time, so the interleaving a
 * race test provokes cannot happen there and the test could not fail. They run on PostgreSQL.
 */
export const RACE_NEEDS_POSTGRES: string | false = TEST_DATABASE_URL
  ? false
  : 'PGlite runs one transaction at a time, so this race cannot happen on it; runs with PROUDAUTH_TEST_DATABASE_URL';
