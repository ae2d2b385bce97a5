// Fault drills (issue #10): `proudauth serve` and `proudauth worker` run as real processes against
// PostgreSQL through a TCP proxy of the test's own, under bounded load through the hot paths. The
// proxy resets every connection, refuses new ones, or slows every packet past the statement
// timeout; PostgreSQL itself terminates the service's backends. Throughout: no 500, no process
// exit, 503 with Retry-After while the database cannot serve, recovery within seconds after, no
// outbox event lost or duplicated, refresh tokens still single use, and health telling the truth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { TEST_ROOT_KEY } from '../../harness/harness.ts';
import { TcpFaultProxy } from '../../harness/tcp-fault-proxy.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { Background, childEnv } from '../cli/cli-process.ts';
import { DrillLoad } from './drill-load.ts';
import { seedDrill } from './drill-seed.ts';

const SKIP = TEST_DATABASE_URL
  ? false
  : 'fault drills need PostgreSQL (PROUDAUTH_TEST_DATABASE_URL is unset): the embedded database has no connection to lose';

const APP = 'proudauth_drill';
const RECOVERY_LIMIT_MS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  limitMs: number,
  probe: () => Promise<T | null> | T | null,
): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(100);
  }
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : { text } };
}

const databaseUp = async (internal: string) =>
  (await (await fetch(`${internal}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()).match(
    /^service_database_up (\d)/m,
  )?.[1];

test('database fault drills against running serve and worker processes', {
  skip: SKIP,
  timeout: 240_000,
}, async (t) => {
  const seed = await seedDrill(t, 8);
  const { h, realm } = seed;
  const base = new URL(TEST_DATABASE_URL as string);
  const proxy = await TcpFaultProxy.start({ host: base.hostname, port: Number(base.port || 5432) });
  t.after(() => proxy.close());
  const dbName = (await h.ctx.db.query<{ n: string }>('select current_database() as n')).rows[0]?.n;
  const viaProxy = new URL(base);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  viaProxy.pathname = `/${dbName}`;
  // The URL's application_name names the drill's connections, so pg_terminate_backend finds them.
  viaProxy.searchParams.set('application_name', APP);

  const env = childEnv({
    PROUDAUTH_DATABASE_URL: viaProxy.toString(),
    PROUDAUTH_KEYS_ROOT_1: TEST_ROOT_KEY,
    PROUDAUTH_KEYS_ACTIVE_VERSION: '1',
    PROUDAUTH_SERVER_PUBLIC_ORIGIN: h.ctx.config.server.publicOrigin,
    PROUDAUTH_SERVER_LISTEN: '127.0.0.1:0',
    PROUDAUTH_SERVER_INTERNAL_LISTEN: '127.0.0.1:0',
    PROUDAUTH_SERVER_DRAIN_DELAY: '0s',
    PROUDAUTH_WORKERS_METRICS_LISTEN: '127.0.0.1:0',
    PROUDAUTH_STORAGE_STATEMENT_TIMEOUT: '2s',
    PROUDAUTH_STORAGE_MAX_CONNS: '5',
    PROUDAUTH_LIMITS_REQUEST_TIMEOUT: '15s',
    PROUDAUTH_OBSERVABILITY_LOG_LEVEL: 'info',
  });
  const serve = new Background('proudauth', ['serve'], env);
  const worker = new Background('proudauth', ['worker'], env);
  t.after(() => {
    serve.kill();
    worker.kill();
  });
  const [, publicUrl = '', internalUrl = ''] = await serve.waitFor(
    /"public":"(http[^"]+)","internal":"(http[^"]+)"/,
    90_000,
  );
  const [, workerUrl = ''] = await worker.waitFor(
    /"internal":"(http[^"]+)"[^\n]*worker internal listener/,
    90_000,
  );

  const load = new DrillLoad(publicUrl, seed);
  load.start(4);
  t.after(() => load.stop());
  const started = Date.now();
  await until('every hot path answers before any fault', 30_000, () => load.recoveredAt(started));

  const report: Record<string, unknown>[] = [];
  /** Applies a fault, then measures how long after it ends every hot path answers again. */
  const drill = async (name: string, fault: () => Promise<void>) => {
    const from = Date.now();
    await fault();
    const lifted = Date.now();
    const recovered = await until(`${name}: recovery`, RECOVERY_LIMIT_MS, () => load.recoveredAt(lifted));
    await until(`${name}: ready again`, RECOVERY_LIMIT_MS, async () =>
      (await getJson(`${publicUrl}/health/ready`)).status === 200 ? true : null,
    );
    report.push({
      drill: name,
      fault_ms: lifted - from,
      recovery_s: (recovered - lifted) / 1000,
      success: load.count('success', from, recovered),
      unavailable_503: load.count('unavailable', from, recovered),
    });
  };

  await t.test('every connection reset every 100 ms for 1.5 s', () =>
    drill('reset', async () => {
      const end = Date.now() + 1500;
      while (Date.now() < end) {
        proxy.resetAll();
        await sleep(100);
      }
    }),
  );

  await t.test('new connections refused for 4 s: health, status and metrics say so, then recover', () =>
    drill('refuse', async () => {
      await proxy.refuseFor(4000);
      await sleep(1500);
      const ready = await getJson(`${publicUrl}/health/ready`);
      assert.deepEqual(ready, { status: 503, body: { status: 'unavailable', reason: 'database' } });
      for (const url of [internalUrl, workerUrl]) {
        const status = await getJson(`${url}/status`);
        assert.equal(status.body.status, 'unavailable');
        assert.deepEqual(status.body.capabilities, { database: 'unavailable' });
        assert.equal(await databaseUp(url), '0');
      }
      await sleep(2500);
    }),
  );

  await t.test('PostgreSQL terminates the service backends (pg_terminate_backend)', () =>
    drill('terminate', async () => {
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
    drill('latency', async () => {
      proxy.latencyMs = 4000;
      await sleep(5000);
      proxy.latencyMs = 0;
    }),
  );

  await load.stop();
  t.diagnostic(JSON.stringify(report));

  await t.test('no 500, no malformed 503, no request left without an answer', () => {
    assert.deepEqual(load.violations().slice(0, 10), []);
    assert.ok(load.count('unavailable') > 0, 'the faults reached the clients as 503');
  });

  await t.test('neither process exited, and neither logged a fatal or unhandled error', () => {
    assert.ok(serve.running, `serve exited\n${serve.stderr}`);
    assert.ok(worker.running, `worker exited\n${worker.stderr}`);
    for (const p of [serve, worker]) {
      const out = p.stdout + p.stderr;
      assert.doesNotMatch(out, /"level":60|unhandled error|Unhandled 'error' event/);
    }
    assert.match(serve.stdout, /database could not serve the request; answered 503/);
  });

  await t.test(
    'every outbox event is dispatched once; every created user has exactly one event',
    async () => {
      await until('outbox drained by the worker', RECOVERY_LIMIT_MS, async () => {
        const r = await h.ctx.db.query(
          'select 1 from outbox where realm_id = $1 and dispatched_at is null limit 1',
          [realm.id],
        );
        return r.rowCount === 0 ? true : null;
      });
      const perUser = await h.ctx.db.query<{ id: string; events: string }>(
        `select u.id, (select count(*) from outbox o where o.realm_id = u.realm_id and o.event_type = 'user.created'
                       and o.data->>'user_id' = u.id) as events
         from users u where u.realm_id = $1 and exists (select 1 from user_identifiers i
           where i.realm_id = u.realm_id and i.user_id = u.id and i.value_key like 'load-%')`,
        [realm.id],
      );
      const ids = new Set(perUser.rows.map((r) => r.id));
      for (const id of load.createdUsers) assert.ok(ids.has(id), `user ${id} answered 201 but is missing`);
      assert.deepEqual(
        perUser.rows.filter((r) => r.events !== '1'),
        [],
      );
    },
  );

  await t.test('refresh tokens stay single use: no family has two live tokens', async () => {
    const r = await h.ctx.db.query(
      `select family_id from refresh_tokens where realm_id = $1 and rotated_at is null
        group by family_id having count(*) > 1`,
      [realm.id],
    );
    assert.equal(r.rowCount, 0);
  });

  await t.test('after the drills: ready, status ok, database up in both processes', async () => {
    assert.deepEqual(await getJson(`${publicUrl}/health/ready`), { status: 200, body: { status: 'ready' } });
    for (const url of [internalUrl, workerUrl]) {
      const status = await getJson(`${url}/status`);
      assert.equal((status.body.capabilities as Record<string, string>).database, 'ok');
      assert.equal(await databaseUp(url), '1');
    }
  });
});
