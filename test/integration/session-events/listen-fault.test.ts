// A long poll of GET /session-events whose database connection breaks while it waits answers 503
// temporarily_unavailable (document 1, Errors: dependency outage) rather than an empty page after
// the wait: a verifier must not take an outage for a quiet stream. PostgreSQL only: the server
// reaches it through a TCP proxy of the test's own, which resets every connection mid-wait.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import { TcpFaultProxy } from '../../harness/tcp-fault-proxy.ts';
import { fileDatabase, TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { readEvents, streamKit } from './stream-kit.ts';

const SKIP = TEST_DATABASE_URL
  ? false
  : 'needs PostgreSQL (PROUDAUTH_TEST_DATABASE_URL is unset): the embedded database has no connection to lose';

test('case=a connection fault during the wait answers 503', { skip: SKIP }, async (t) => {
  const base = new URL(TEST_DATABASE_URL as string);
  const proxy = await TcpFaultProxy.start({ host: base.hostname, port: Number(base.port || 5432) });
  t.after(() => proxy.close());
  const file = await fileDatabase();
  const dbName = (await file.query<{ n: string }>('select current_database() as n')).rows[0]?.n;
  const viaProxy = new URL(base);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  viaProxy.pathname = `/${dbName}`;
  const db = openPostgres({ url: viaProxy.toString(), maxConns: 4, statementTimeoutMs: 10_000 });
  t.after(() => db.close());
  const k = await streamKit(t, { db });
  const token = await k.reader.token();
  const start = await readEvents(k.h, k.realm, token);
  const before = proxy.connections;
  const waiting = readEvents(k.h, k.realm, token, { cursor: String(start.body.next_cursor), wait: '25' });
  // The wait has begun once its LISTEN connection is open (bounded: a few seconds at most).
  for (let i = 0; i < 200 && proxy.connections <= before; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(proxy.connections > before, 'the long poll opened its listening connection');
  proxy.resetAll();
  const answer = await waiting;
  assert.equal(answer.status, 503);
  assert.equal(answer.body.code, 'temporarily_unavailable');
});
