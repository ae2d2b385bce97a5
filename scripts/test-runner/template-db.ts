// One migrated template database per run, which every test file clones (test/harness/test-db.ts):
// a PostgreSQL database created from it with `create database ... template`, or a PGlite
// data-directory dump each file loads into memory.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Db } from '../../src/platform/db/db.ts';
import { migrate } from '../../src/platform/db/migrate.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { databaseUrlFor } from '../../test/harness/test-db.ts';
import type { DatabaseKind } from './timings.ts';

export interface TemplateDatabase {
  kind: DatabaseKind;
  /** What the test processes need to find the template. */
  env: Record<string, string>;
  describe: string;
  cleanup(): Promise<void>;
}

/**
 * Every test file loads the PGlite dump and starts a backend from it, so the dump is cut to what a
 * test process uses (about 1.0 s of CPU per file before, 0.6 s after, in docs/testing.md):
 * - shared_buffers 16MB instead of 128MB (postgresql.auto.conf travels in the dump): the backend
 *   sets up every buffer at start, and a test database fits in far fewer;
 * - no template0 and template1 (15 of the dump's 45 MB, untarred by every file): nothing creates
 *   a database on the embedded one; PostgreSQL runs keep theirs.
 * A checkpoint last, so a loading backend has no WAL to replay.
 */
async function slimForTests(db: Db): Promise<void> {
  await db.exec(`alter system set shared_buffers = '16MB'`);
  await db.exec(`update pg_database set datistemplate = false where datname in ('template0', 'template1')`);
  await db.exec('drop database template0');
  await db.exec('drop database template1');
  await db.exec('checkpoint');
}

export async function prepareTemplate(
  baseUrl: string | null,
  runId: string,
  tmp: string,
): Promise<TemplateDatabase> {
  if (baseUrl) {
    const template = `${runId}_tmpl`;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`create database "${template}"`);
    const db = openPostgres({
      url: databaseUrlFor(baseUrl, template),
      maxConns: 2,
      statementTimeoutMs: 60_000,
    });
    await migrate(db);
    await db.close();
    return {
      kind: 'postgres',
      env: { PROUDAUTH_TEST_PG_TEMPLATE: template },
      describe: `PostgreSQL (template ${template})`,
      cleanup: async () => {
        // Every database this run made (template, per-file clones, scratch deployments) starts with runId.
        const dbs = await admin.query<{ datname: string }>(
          `select datname from pg_database where datname like $1`,
          [`${runId}%`],
        );
        for (const { datname } of dbs.rows)
          await admin.query(`drop database if exists "${datname}" with (force)`);
        await admin.end();
      },
    };
  }
  mkdirSync(tmp, { recursive: true });
  const db = await openPglite({});
  await migrate(db);
  await slimForTests(db);
  const file = join(tmp, `${runId}.tar`);
  writeFileSync(file, Buffer.from(await (await db.dump()).arrayBuffer()));
  await db.close();
  return {
    kind: 'pglite',
    env: { PROUDAUTH_TEST_PGLITE_TEMPLATE: file },
    describe: 'embedded PGlite',
    cleanup: async () => rmSync(file, { force: true }),
  };
}
