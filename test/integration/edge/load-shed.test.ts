// In-flight shedding at the public listener (spec doc 2 Limits and Errors; decision D11):
// with limits.max_inflight_requests = 8 the reserved pool is 8/4+1 = 3, so ordinary requests are
// shed from the 6th in flight while health and administrative requests may use all 8.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { sampleValue } from '../ops/prom-text.ts';
import { type Answer, assertJson, assertProblem, eventually, Latch, send } from './http-client.ts';

const MAX = 8;
const ORDINARY_LIMIT = 5;
const RESERVED = MAX - ORDINARY_LIMIT;
const AUTH = { authorization: 'Bearer some-admin-token' };

interface Held {
  h: Harness;
  arrived: { ordinary: number; reserved: number; me: number };
  /** Starts a request that stays in flight until release(). */
  hold(path: string, headers?: Record<string, string>): void;
  release(): Promise<Answer[]>;
}

async function start(t: TestContext): Promise<Held> {
  const latch = new Latch();
  const pending: Promise<Answer>[] = [];
  // Registered before the harness: after-hooks run in registration order, and closing the
  // listeners waits for the held requests, so they must be released first.
  t.after(async () => {
    latch.open();
    await Promise.allSettled(pending);
  });
  const arrived = { ordinary: 0, reserved: 0, me: 0 };
  const h = await startHarness(t, {
    overrides: { 'limits.max_inflight_requests': MAX },
    beforeListen: (app) => {
      app.get('/test/hold', async () => {
        arrived.ordinary++;
        await latch.promise;
        return { held: 'ordinary' };
      });
      app.get('/api/v1/realms/:realm/test-hold', async () => {
        arrived.reserved++;
        await latch.promise;
        return { held: 'reserved' };
      });
      app.post('/test/upload', async (req) => req.body);
      app.get('/api/v1/realms/:realm/me/test-hold', async () => {
        arrived.me++;
        await latch.promise;
        return { held: 'me' };
      });
    },
  });
  return {
    h,
    arrived,
    hold(path, headers = {}) {
      pending.push(send(h.publicUrl, path, { headers, timeoutMs: 20_000 }));
    },
    async release() {
      latch.open();
      return Promise.all(pending);
    },
  };
}

function assertShed(res: Answer, what: string): void {
  assert.equal(res.status, 503, `${what}: expected 503, got ${res.status} ${res.text.slice(0, 200)}`);
  const p = assertProblem(res, 503, 'temporarily_unavailable');
  assert.equal(res.headers['retry-after'], '2', what);
  assert.ok(p.detail, what);
}

const metricsOf = async (h: Harness): Promise<string> => (await h.internal('/metrics')).text();

describe('edge › load shedding', () => {
  test('case=ordinary requests beyond max minus the reserved pool get 503 with Retry-After: 2', async (t) => {
    const s = await start(t);
    const url = s.h.publicUrl;
    for (let i = 0; i < ORDINARY_LIMIT; i++) s.hold('/test/hold');
    await eventually('ordinary requests in flight', () => s.arrived.ordinary === ORDINARY_LIMIT);

    const ordinary: [string, string, Record<string, string>][] = [
      ['another ordinary request', '/test/hold', {}],
      ['a realm key set', '/realms/x/jwks', {}],
      ['self-service with a bearer', '/api/v1/realms/x/me/test-hold', AUTH],
      ['self-service with a bearer, bare', '/api/v1/realms/x/me', AUTH],
      ['self-service with an escaped segment', '/api/v1/realms/x/%6De/test-hold', AUTH],
      ['sign-in API with a bearer', '/api/v1/realms/x/auth/transactions', AUTH],
      ['registration with a bearer', '/api/v1/realms/x/registrations', AUTH],
      ['an administrative path without credentials', '/api/v1/realms/x/anything', {}],
      ['a path that only looks administrative', '/api/v2/realms/x/anything', AUTH],
    ];
    for (const [what, path, headers] of ordinary) assertShed(await send(url, path, { headers }), what);
    assert.equal(s.arrived.ordinary, ORDINARY_LIMIT, 'no shed request reached its handler');
    assert.equal(s.arrived.me, 0, 'no self-service request reached its handler');

    // The reserved pool still serves health and administration.
    assert.deepEqual(assertJson(await send(url, '/health/live'), 200), { status: 'ok' });
    assert.deepEqual(assertJson(await send(url, '/health/ready'), 200), { status: 'ready' });
    assertProblem(await send(url, '/api/v1/realms/x/anything', { headers: AUTH }), 404, 'not_found');
    assertProblem(await send(url, '/api/v1/realms/x/anything?q=me', { headers: AUTH }), 404, 'not_found');

    await eventually('shed requests are counted by pool', async () => {
      const m = await metricsOf(s.h);
      return sampleValue(m, 'service_load_shed_total', { pool: 'ordinary' }) === ordinary.length;
    });
    assert.equal(
      sampleValue(await metricsOf(s.h), 'service_load_shed_total', { pool: 'reserved' }),
      undefined,
    );

    const answers = await s.release();
    for (const a of answers) assert.deepEqual(assertJson(a, 200), { held: 'ordinary' });
    await eventually('ordinary requests are served again', async () => {
      return (await send(url, '/test/hold')).status === 200;
    });
  });

  test('case=the reserved pool serves health and administration up to the whole max, then sheds', async (t) => {
    const s = await start(t);
    const url = s.h.publicUrl;
    for (let i = 0; i < ORDINARY_LIMIT; i++) s.hold('/test/hold');
    await eventually('ordinary requests in flight', () => s.arrived.ordinary === ORDINARY_LIMIT);
    for (let i = 0; i < RESERVED; i++) s.hold('/api/v1/realms/x/test-hold', AUTH);
    await eventually('administrative requests in flight', () => s.arrived.reserved === RESERVED);

    assertShed(await send(url, '/health/live'), 'liveness at the whole max');
    assertShed(await send(url, '/health/ready'), 'readiness at the whole max');
    assertShed(await send(url, '/api/v1/realms/x/test-hold', { headers: AUTH }), 'administration at the max');
    assertShed(await send(url, '/test/hold'), 'ordinary at the max');
    assert.equal(s.arrived.reserved, RESERVED);

    await eventually('shed requests are counted by pool', async () => {
      const m = await metricsOf(s.h);
      return (
        sampleValue(m, 'service_load_shed_total', { pool: 'reserved' }) === 3 &&
        sampleValue(m, 'service_load_shed_total', { pool: 'ordinary' }) === 1
      );
    });

    const answers = await s.release();
    assert.deepEqual(answers.map((a) => (assertJson(a, 200) as { held: string }).held).sort(), [
      ...Array(ORDINARY_LIMIT).fill('ordinary'),
      ...Array(RESERVED).fill('reserved'),
    ]);
    await eventually(
      'liveness is served again',
      async () => (await send(url, '/health/live')).status === 200,
    );
  });

  test('case=a request whose body never arrives holds its slot until it is cancelled', async (t) => {
    const controllers = Array.from({ length: ORDINARY_LIMIT }, () => new AbortController());
    const stalled: Promise<unknown>[] = [];
    t.after(async () => {
      for (const c of controllers) c.abort();
      await Promise.allSettled(stalled);
    });
    const s = await start(t);
    const url = s.h.publicUrl;
    for (const c of controllers) {
      stalled.push(
        send(url, '/test/upload', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': 1000 },
          signal: c.signal,
          timeoutMs: 20_000,
        }).catch((e: Error) => e),
      );
    }
    await eventually('stalled uploads fill the ordinary pool', async () => {
      const res = await send(url, '/no/such/path');
      return res.status === 503;
    });
    assertShed(await send(url, '/no/such/path'), 'ordinary while uploads stall');
    assert.equal((await send(url, '/health/live')).status, 200);
    for (const c of controllers) c.abort();
    await Promise.allSettled(stalled);
    await eventually('aborted uploads give their slots back', async () => {
      return (await send(url, '/no/such/path')).status === 404;
    });
  });
});
