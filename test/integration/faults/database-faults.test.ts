// Fault drills (issue #10): `proudauth serve` and `proudauth worker` run as real processes against
// PostgreSQL through a TCP proxy of the test's own, under bounded load through the hot paths. The
// proxy resets every connection, refuses new ones, or slows every packet past the statement
// timeout; PostgreSQL itself terminates the service's backends. Throughout: no 500, no process
// exit, 503 with Retry-After while the database cannot serve, recovery within seconds after, no
// outbox event lost or duplicated, refresh tokens and authorization codes still single use, and
// health telling the truth. PostgreSQL restarted under the service: database-restart.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { TcpFaultProxy } from '../../harness/tcp-fault-proxy.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import {
  APP,
  assertReportedDown,
  checkAfterFaults,
  Drills,
  sleep,
  startServices,
  until,
} from './drill-kit.ts';
import { DrillLoad } from './drill-load.ts';
import { seedDrill } from './drill-seed.ts';

const SKIP = TEST_DATABASE_URL
  ? false
  : 'fault drills need PostgreSQL (PROUDAUTH_TEST_DATABASE_URL is unset): the embedded database has no connection to lose';

test('database fault drills against running serve and worker processes', {
  skip: SKIP,
  timeout: 240_000,
}, async (t) => {
  const seed = await seedDrill(t, 8);
  const { h } = seed;
  const base = new URL(TEST_DATABASE_URL as string);
  const proxy = await TcpFaultProxy.start({ host: base.hostname, port: Number(base.port || 5432) });
  t.after(() => proxy.close());
  const dbName = (await h.ctx.db.query<{ n: string }>('select current_database() as n')).rows[0]?.n;
  const viaProxy = new URL(base);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  viaProxy.pathname = `/${dbName}`;
  const services = await startServices(t, seed, viaProxy.toString());

  const load = new DrillLoad(services.publicUrl, seed);
  load.start(4);
  t.after(() => load.stop());
  const started = Date.now();
  await until('every hot path answers before any fault', 30_000, () => load.recoveredAt(started));
  const drills = new Drills(load, services);

  await t.test('every connection reset every 100 ms for 1.5 s', () =>
    drills.run('reset', async () => {
      const end = Date.now() + 1500;
      while (Date.now() < end) {
        proxy.resetAll();
        await sleep(100);
      }
    }),
  );

  // Refused until the health checks are done (at least 4 s): on a busy machine they can take longer
  // than a fixed window, and a window ending mid-check would make the processes rightly say "up".
  await t.test(
    'new connections refused for 4 s or more: health, status and metrics say so, then recover',
    () =>
      drills.run('refuse', async () => {
        const from = Date.now();
        await proxy.refuse();
        try {
          await sleep(1500);
          await assertReportedDown(services);
          await sleep(Math.max(0, 4000 - (Date.now() - from)));
        } finally {
          await proxy.resume();
        }
      }),
  );

  await t.test('PostgreSQL terminates the service backends (pg_terminate_backend)', () =>
    drills.run('terminate', async () => {
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL as string });
      await admin.connect();
      try {
        let terminated = 0;
        for (let i = 0; i < 3; i++) {
          const r = await admin.query(
            'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
            [APP],
          );
          terminated += r.rowCount ?? 0;
          await sleep(300);
        }
        assert.ok(terminated > 0, 'the service had backends to terminate');
      } finally {
        await admin.end();
      }
    }),
  );

  await t.test('every packet delayed 4 s (past the 2 s statement timeout) for 5 s: 503, no hang', () =>
    drills.run('latency', async () => {
      proxy.latencyMs = 4000;
      await sleep(5000);
      proxy.latencyMs = 0;
    }),
  );

  await load.stop();
  t.diagnostic(JSON.stringify({ drills: drills.report, codes: load.codeReport() }));
  await checkAfterFaults(t, { load, seed, services });
});
