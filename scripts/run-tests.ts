// The test command. Node 20's test runner neither globs nor finds .ts files, so
// this lists them; it also migrates one template database per run, which every test file clones.
// PROUDAUTH_TEST_DATABASE_URL=postgres://... runs against PostgreSQL; otherwise embedded PGlite.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import pg from 'pg';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { openPglite } from '../src/platform/db/pglite.ts';
import { databaseUrlFor } from '../test/harness/test-db.ts';

const root = join(import.meta.dirname, '..');

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' ? [] : findTests(p);
    return name.endsWith('.test.ts') ? [relative(root, p)] : [];
  });
}

const filters = process.argv.slice(2);
const files = [...findTests(join(root, 'src')), ...findTests(join(root, 'test'))]
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  process.stderr.write('no test files matched\n');
  process.exit(1);
}

// Tests of the built-in login UI load its built files (dist/ui): build them first, as `npm run
// build` and `npm start` do.
if (files.some((f) => f.includes('browser') || f.includes('builtin-ui'))) {
  const built = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'build-ui.ts')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const runId = `pa_test_${process.pid}_${randomBytes(3).toString('hex')}`;
const env: NodeJS.ProcessEnv = { ...process.env };
const baseUrl = process.env.PROUDAUTH_TEST_DATABASE_URL || null;
const tmp = join(root, '.test-tmp');
let cleanup = async () => {};

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
  env.PROUDAUTH_TEST_PG_TEMPLATE = template;
  cleanup = async () => {
    const dbs = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1`,
      [`${runId}%`],
    );
    for (const { datname } of dbs.rows)
      await admin.query(`drop database if exists "${datname}" with (force)`);
    await admin.end();
  };
  process.stdout.write(`# database: PostgreSQL (template ${template})\n`);
} else {
  mkdirSync(tmp, { recursive: true });
  const db = await openPglite({});
  await migrate(db);
  const file = join(tmp, `${runId}.tar`);
  writeFileSync(file, Buffer.from(await (await db.dump()).arrayBuffer()));
  await db.close();
  env.PROUDAUTH_TEST_PGLITE_TEMPLATE = file;
  cleanup = async () => rmSync(file, { force: true });
  process.stdout.write('# database: embedded PGlite\n');
}

const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', ...files], {
  cwd: root,
  env,
  stdio: 'inherit',
});
await cleanup();
process.exit(result.status ?? 1);
