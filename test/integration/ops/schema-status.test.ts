// /status and /health/ready on a database whose schema is behind (spec doc 2, Operator status
// object; Health): both say "schema", neither says the database is unavailable. On PostgreSQL the
// database is a new, empty one on the test server; otherwise an empty in-memory PGlite.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import pg from 'pg';
import type { Db } from '../../../src/platform/db/db.ts';
import { loadMigrations, migrate } from '../../../src/platform/db/migrate.ts';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import { openPglite } from '../../../src/platform/db/pglite.ts';
import { databaseUrlFor, TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { assertJson, send } from '../edge/http-client.ts';
import { sampleValue } from './prom-text.ts';
import { contextOver, listen } from './servers.ts';

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL! });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A database with no schema at all, closed (and on PostgreSQL dropped) after the test. */
async function emptyDatabase(t: TestContext): Promise<Db> {
  if (!TEST_DATABASE_URL) {
    const db = await openPglite({});
    t.after(() => db.close());
    return db;
  }
  const name = `pa_test_empty_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create database "${name}"`);
  const db = openPostgres({
    url: databaseUrlFor(TEST_DATABASE_URL, name),
    maxConns: 4,
    statementTimeoutMs: 10_000,
  });
  t.after(async () => {
    await db.close();
    await adminQuery(`drop database if exists "${name}"`);
  });
  return db;
}

describe('ops › status and readiness on a schema that is behind', () => {
  test('case=an unmigrated database: status says schema behind, readiness says schema', async (t) => {
    const l = await listen(t, await contextOver(await emptyDatabase(t)));

    const body = assertJson(await send(l.internalUrl, '/status'), 200) as Record<string, unknown>;
    assert.equal(body.status, 'degraded');
    assert.equal(body.schema, 'behind');
    assert.deepEqual(body.capabilities, {
      database: 'ok',
      schema: 'degraded',
      // Their tables do not exist yet: what they report on cannot be read.
      signing: 'unavailable',
      outbox: 'unavailable',
      webhooks: 'unavailable',
      jobs: 'unavailable',
      email_delivery: 'unavailable',
      audit_sealing: 'unavailable',
    });
    assert.equal(typeof body.clock_skew_ms, 'number');
    assert.equal(body.key_provider, 'software');

    assert.deepEqual(assertJson(await send(l.publicUrl, '/health/ready'), 503), {
      status: 'unavailable',
    });
    const metrics = await send(l.internalUrl, '/metrics');
    assert.equal(metrics.status, 200);
    assert.equal(sampleValue(metrics.text, 'service_database_up'), 1);
  });

  test('case=one migration pending: only the schema is degraded', async (t) => {
    const db = await emptyDatabase(t);
    const migrations = loadMigrations();
    await migrate(db, migrations.slice(0, -1));
    const l = await listen(t, await contextOver(db));

    const body = assertJson(await send(l.internalUrl, '/status'), 200) as Record<string, unknown>;
    assert.equal(body.status, 'degraded');
    assert.equal(body.schema, 'behind');
    // Capabilities whose tables the last migration creates read as unavailable; the others are ok.
    const caps = body.capabilities as Record<string, string>;
    assert.deepEqual(
      { database: caps.database, schema: caps.schema, signing: caps.signing, outbox: caps.outbox },
      { database: 'ok', schema: 'degraded', signing: 'ok', outbox: 'ok' },
    );
    assert.equal((body.backlog_oldest_seconds as Record<string, number>).outbox, 0);
    assert.deepEqual(assertJson(await send(l.publicUrl, '/health/ready'), 503), {
      status: 'unavailable',
    });
  });
});
