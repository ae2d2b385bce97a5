// Graceful shutdown of the real startHttpServers (spec doc 2, Health, status and metrics): for
// server.drain_delay readiness answers draining while everything else is still served; then the
// listeners stop accepting, requests already in flight complete, and shutdown resolves.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { OPERATOR_ACTOR } from '../../../src/audit/audit.types.ts';
import { type HttpServers, startHttpServers } from '../../../src/main/http-server.ts';
import type { Db, QueryResult } from '../../../src/platform/db/db.ts';
import { createRealm } from '../../../src/setup/realm.service.ts';
import { uniqueRealmName } from '../../harness/harness.ts';
import { fileDatabase } from '../../harness/test-db.ts';
import { type Answer, assertJson, eventually, Latch, send } from '../edge/http-client.ts';
import { contextOver } from './servers.ts';

/** The file's database, with a switch that makes every query wait until the test releases it. */
function gated(real: Db) {
  const gate = { latch: null as Latch | null, held: 0 };
  const db: Db = {
    kind: real.kind,
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      if (gate.latch) {
        gate.held++;
        await gate.latch.promise;
      }
      return real.query<R>(sql, params);
    },
    tx: (fn) => real.tx(fn),
    exec: (script) => real.exec(script),
    // The file's database outlives this test.
    close: async () => {},
  };
  return { db, gate };
}

/** Fails instead of hanging when `p` does not settle within `ms`. */
async function within<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** GET over a keep-alive agent, like a load balancer or a proxy pool would send it. */
function keepAliveGet(agent: Agent, url: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { agent, timeout: 20_000 });
    req.on('timeout', () => req.destroy(new Error('keep-alive request timed out')));
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.end();
  });
}

const refused = async (url: string): Promise<boolean> => {
  try {
    await send(url, '/health/live', { timeoutMs: 2000 });
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
};

async function setUp(t: TestContext) {
  const real = await fileDatabase();
  const { db, gate } = gated(real);
  const ctx = await contextOver(db, { overrides: { 'server.drain_delay': '1s' } });
  if (!ctx.keyring) throw new Error('no keyring');
  const realm = uniqueRealmName();
  await createRealm(
    { db: real, keyring: ctx.keyring, signingAlgorithm: ctx.config.keys.signingAlgorithm },
    { name: realm },
    OPERATOR_ACTOR,
    ctx.clock.now(),
  );
  const servers: HttpServers = await startHttpServers(ctx);
  let shutdown: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    shutdown ??= servers.shutdown();
    return shutdown;
  };
  t.after(async () => {
    gate.latch?.open();
    await within('shutdown in cleanup', 10_000, stop());
  });
  return { ctx, servers, gate, realm, stop };
}

describe('ops › draining', () => {
  test('case=ready answers draining during the delay, in-flight requests complete, then the listeners close', async (t) => {
    const { servers, gate, realm, stop } = await setUp(t);
    const { publicUrl, internalUrl } = servers;
    assert.deepEqual(assertJson(await send(publicUrl, '/health/ready'), 200), { status: 'ready' });

    // A key-set request that is still waiting on the database when shutdown begins.
    const latch = new Latch();
    gate.latch = latch;
    const inflight = send(publicUrl, `/realms/${realm}/jwks`, { timeoutMs: 20_000 });
    await eventually('the request is waiting on the database', () => gate.held > 0);

    const shutdown = stop();
    const draining = await send(publicUrl, '/health/ready');
    assert.deepEqual(assertJson(draining, 503), { status: 'draining' });
    assert.equal(draining.headers['cache-control'], 'no-store');
    // Draining is a signal to the load balancer; everything else is still served meanwhile.
    assert.deepEqual(assertJson(await send(publicUrl, '/health/live'), 200), { status: 'ok' });
    assert.equal((await send(internalUrl, '/health/live')).status, 200);

    await eventually('the public listener stops accepting', () => refused(publicUrl), 10_000);
    assert.equal(await refused(internalUrl), true, 'the internal listener stops accepting too');

    latch.open();
    gate.latch = null;
    const res = await inflight;
    const body = assertJson(res, 200) as { keys: unknown[] };
    assert.ok(body.keys.length > 0, 'the in-flight request got its key set');
    await within('shutdown', 10_000, shutdown);
  });

  test('case=a keep-alive connection whose request was in flight does not hold shutdown open', async (t) => {
    const { servers, gate, realm, stop } = await setUp(t);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    // Warm the connection so the held request travels on an already open keep-alive socket.
    assert.equal((await keepAliveGet(agent, servers.publicUrl, '/health/live')).status, 200);

    const latch = new Latch();
    gate.latch = latch;
    const inflight = keepAliveGet(agent, servers.publicUrl, `/realms/${realm}/jwks`);
    await eventually('the request is waiting on the database', () => gate.held > 0);
    const shutdown = stop();
    await eventually('the public listener stops accepting', () => refused(servers.publicUrl), 10_000);
    latch.open();
    gate.latch = null;
    const res = await inflight;
    assert.equal(res.status, 200);
    assert.equal(res.headers.connection, 'close', 'the client is told to let the connection go');
    // Well under the 5 s keep-alive timeout an idle connection would otherwise hold shutdown for.
    await within('shutdown after the last in-flight request', 3000, shutdown);
  });
});
