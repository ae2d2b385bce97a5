// What every fault drill shares: `serve` and `worker` started as real processes on a database URL,
// a drill step that measures recovery after a fault, and the checks that follow the faults (no
// 500, no process death, no outbox event lost or duplicated, refresh tokens and authorization
// codes spent at most once, health telling the truth afterwards).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Db } from '../../../src/platform/db/db.ts';
import { TEST_ROOT_KEY } from '../../harness/harness.ts';
import { databaseUrlFor, TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { Background, childEnv } from '../cli/cli-process.ts';
import type { DrillLoad } from './drill-load.ts';
import type { DrillSeed } from './drill-seed.ts';

/** Connections of the drilled processes carry this application name, so pg_stat_activity finds them. */
export const APP = 'proudauth_drill';
export const RECOVERY_LIMIT_MS = 20_000;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until<T>(
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

export async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : { text } };
}

export const databaseUp = async (internal: string) =>
  (await (await fetch(`${internal}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()).match(
    /^service_database_up (\d)/m,
  )?.[1];

export interface Services {
  serve: Background;
  worker: Background;
  publicUrl: string;
  /** The internal listener of serve (status, metrics). */
  internalUrl: string;
  /** The internal listener of the worker. */
  workerUrl: string;
  kill(): void;
}

/** The URL of `db` (a database of the test run's PostgreSQL), for child processes to open it too. */
export async function databaseUrlOf(db: Db): Promise<string> {
  const name = (await db.query<{ n: string }>('select current_database() as n')).rows[0]?.n;
  if (!TEST_DATABASE_URL || !name) throw new Error("not a database of the test run's PostgreSQL");
  return databaseUrlFor(TEST_DATABASE_URL, name);
}

/** The environment of drilled `serve` and `worker` processes on `databaseUrl` (named APP there). */
export function drillEnv(
  seed: Pick<DrillSeed, 'h'>,
  databaseUrl: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', APP);
  return childEnv({
    PROUDAUTH_DATABASE_URL: url.toString(),
    PROUDAUTH_KEYS_ROOT_1: TEST_ROOT_KEY,
    PROUDAUTH_KEYS_ACTIVE_VERSION: '1',
    PROUDAUTH_SERVER_PUBLIC_ORIGIN: seed.h.ctx.config.server.publicOrigin,
    PROUDAUTH_SERVER_LISTEN: '127.0.0.1:0',
    PROUDAUTH_SERVER_INTERNAL_LISTEN: '127.0.0.1:0',
    PROUDAUTH_SERVER_DRAIN_DELAY: '0s',
    // The drills count one serve process's connections and restarts; several are tested in multi-process.test.ts.
    PROUDAUTH_SERVER_PROCESSES: '1',
    PROUDAUTH_WORKERS_METRICS_LISTEN: '127.0.0.1:0',
    PROUDAUTH_STORAGE_STATEMENT_TIMEOUT: '2s',
    PROUDAUTH_STORAGE_MAX_CONNS: '5',
    PROUDAUTH_LIMITS_REQUEST_TIMEOUT: '15s',
    // The seeded password hash uses the harness's small Argon2 memory; the same here keeps sign-ins
    // of the load cheap on a busy machine.
    PROUDAUTH_SECURITY_PASSWORD_ARGON_MEMORY_KIB: '8192',
    PROUDAUTH_OBSERVABILITY_LOG_LEVEL: 'info',
    ...extra,
  });
}

/** The public and internal URLs a started `serve` logged. */
export async function serveUrls(serve: Background): Promise<{ publicUrl: string; internalUrl: string }> {
  const [, publicUrl = '', internalUrl = ''] = await serve.waitFor(
    /"command":"serve","public":"(http[^"]+)","internal":"(http[^"]+)"/,
    90_000,
  );
  return { publicUrl, internalUrl };
}

/** The internal URL a started `worker` logged. */
export async function workerUrl(worker: Background): Promise<string> {
  const [, url = ''] = await worker.waitFor(/"command":"worker","internal":"(http[^"]+)"/, 90_000);
  return url;
}

/** `proudauth serve` and `proudauth worker` on `databaseUrl` (which names them with APP), killed after the test. */
export async function startServices(t: TestContext, seed: DrillSeed, databaseUrl: string): Promise<Services> {
  const env = drillEnv(seed, databaseUrl);
  const serve = new Background('proudauth', ['serve'], env);
  const worker = new Background('proudauth', ['worker'], env);
  const kill = () => {
    serve.kill();
    worker.kill();
  };
  t.after(kill);
  const { publicUrl, internalUrl } = await serveUrls(serve);
  return { serve, worker, publicUrl, internalUrl, workerUrl: await workerUrl(worker), kill };
}

/** Asserts the database is reported unavailable by readiness, both /status and both metrics. */
export async function assertReportedDown(s: Services): Promise<void> {
  const ready = await getJson(`${s.publicUrl}/health/ready`);
  assert.deepEqual(ready, { status: 503, body: { status: 'unavailable' } });
  for (const url of [s.internalUrl, s.workerUrl]) {
    const status = await getJson(`${url}/status`);
    assert.equal(status.body.status, 'unavailable');
    assert.deepEqual(status.body.capabilities, { database: 'unavailable' });
    assert.equal(await databaseUp(url), '0');
  }
}

/** Applies faults and measures how long after each ends every hot path answers again. */
export class Drills {
  readonly report: Record<string, unknown>[] = [];
  private readonly load: DrillLoad;
  private readonly services: Services;

  constructor(load: DrillLoad, services: Services) {
    this.load = load;
    this.services = services;
  }

  async run(name: string, fault: () => Promise<void>): Promise<void> {
    const { load } = this;
    const from = Date.now();
    await fault();
    const lifted = Date.now();
    const recovered = await until(`${name}: recovery`, RECOVERY_LIMIT_MS, () => load.recoveredAt(lifted));
    await until(`${name}: ready again`, RECOVERY_LIMIT_MS, async () =>
      (await getJson(`${this.services.publicUrl}/health/ready`)).status === 200 ? true : null,
    );
    this.report.push({
      drill: name,
      fault_ms: lifted - from,
      recovery_s: (recovered - lifted) / 1000,
      success: load.count('success', from, recovered),
      unavailable_503: load.count('unavailable', from, recovered),
    });
  }
}

/** The checks after the faults, as subtests; the load must have been stopped. */
export async function checkAfterFaults(
  t: TestContext,
  { load, seed, services }: { load: DrillLoad; seed: DrillSeed; services: Services },
): Promise<void> {
  const { h, realm } = seed;
  const { serve, worker } = services;

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

  await t.test('authorization codes are redeemed at most once', async () => {
    const answered200 = [...load.codeGrants.keys()];
    assert.ok(answered200.length > 0, 'the load redeemed codes');
    // A redemption leaves the code consumed with what it issued (the refresh family, for this
    // client), in the transaction that starts that family; the family carries the code's session.
    // So per session, as many families as consumed codes, and each consumed code names one of them.
    const codes = await h.ctx.db.query<{ transaction_id: string; used: boolean; family: string | null }>(
      `select c.transaction_id, c.consumed_at is not null as used, f.id as family
         from authorization_codes c left join refresh_families f
           on f.realm_id = c.realm_id and f.id = c.issued->>'family_id' and f.session_id = c.session_id
        where c.realm_id = $1`,
      [realm.id],
    );
    const byTx = new Map(codes.rows.map((c) => [c.transaction_id, c]));
    for (const txId of answered200)
      assert.equal(byTx.get(txId)?.used, true, `the code of ${txId} answered 200 but is not marked used`);
    assert.deepEqual(
      codes.rows.filter((c) => c.used && c.family === null),
      [],
      'a consumed code names no refresh family of its session',
    );
    const perSession = await h.ctx.db.query(
      `select s.session_id, s.families, s.codes from (
         select c.session_id,
                (select count(*) from refresh_families f where f.realm_id = c.realm_id and f.session_id = c.session_id) as families,
                count(*) filter (where c.consumed_at is not null) as codes
           from authorization_codes c where c.realm_id = $1 group by c.realm_id, c.session_id) s
        where s.families <> s.codes`,
      [realm.id],
    );
    assert.deepEqual(perSession.rows, [], 'a session has more refresh families than redeemed codes');
    assert.deepEqual(
      [...load.codeGrants].filter(([, n]) => n > 1),
      [],
      'a code answered 200 more than once',
    );
  });

  await t.test('after the drills: ready, status ok, database up in both processes', async () => {
    assert.deepEqual(await getJson(`${services.publicUrl}/health/ready`), {
      status: 200,
      body: { status: 'ready' },
    });
    for (const url of [services.internalUrl, services.workerUrl]) {
      const status = await getJson(`${url}/status`);
      assert.equal((status.body.capabilities as Record<string, string>).database, 'ok');
      assert.equal(await databaseUp(url), '1');
    }
  });
}
