// GET /health/ready and /health/live on the public listener (spec doc 2, Health, status and
// metrics): ready, database down or silent, and clock skew against the database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHarness } from '../../harness/harness.ts';
import { assertJson, send } from '../edge/http-client.ts';
import { contextOver, listen, refusedDatabase, silentDatabase, skewedClock } from './servers.ts';

describe('ops › readiness', () => {
  test('case=ready when the database answers, the schema is current and keys exist', async (t) => {
    const h = await startHarness(t);
    await h.createRealm();
    const res = await send(h.publicUrl, '/health/ready');
    assert.deepEqual(assertJson(res, 200), { status: 'ready' });
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('case=liveness answers ok and is never cached', async (t) => {
    const h = await startHarness(t);
    const res = await send(h.publicUrl, '/health/live');
    assert.deepEqual(assertJson(res, 200), { status: 'ok' });
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('case=503 unavailable when the database refuses connections', async (t) => {
    const l = await listen(t, await contextOver(refusedDatabase(t)));
    const res = await send(l.publicUrl, '/health/ready', { timeoutMs: 8000 });
    const body = assertJson(res, 503) as { status: string };
    assert.equal(body.status, 'unavailable');
    // Liveness never touches the database.
    assert.deepEqual(assertJson(await send(l.publicUrl, '/health/live'), 200), { status: 'ok' });
  });

  test('case=503 unavailable, not a hang, when the database accepts connections but never answers', async (t) => {
    const l = await listen(t, await contextOver(await silentDatabase(t)));
    const res = await send(l.publicUrl, '/health/ready', { timeoutMs: 8000 });
    const body = assertJson(res, 503) as { status: string };
    assert.equal(body.status, 'unavailable');
  });

  test('case=503 degraded clock_skew when the server clock runs 10 minutes ahead of the database', async (t) => {
    const h = await startHarness(t, { clock: skewedClock(10 * 60_000) });
    const res = await send(h.publicUrl, '/health/ready');
    assert.deepEqual(assertJson(res, 503), { status: 'degraded', reason: 'clock_skew' });
  });

  test('case=503 degraded clock_skew when the server clock runs 10 minutes behind', async (t) => {
    const h = await startHarness(t, { clock: skewedClock(-10 * 60_000) });
    assert.deepEqual(assertJson(await send(h.publicUrl, '/health/ready'), 503), {
      status: 'degraded',
      reason: 'clock_skew',
    });
  });

  test('case=the skew limit is observability.max_clock_skew', async (t) => {
    const ahead = skewedClock(30_000);
    const strict = await startHarness(t, { clock: ahead });
    assert.deepEqual(assertJson(await send(strict.publicUrl, '/health/ready'), 503), {
      status: 'degraded',
      reason: 'clock_skew',
    });
    const lenient = await startHarness(t, {
      clock: ahead,
      overrides: { 'observability.max_clock_skew': '1m' },
    });
    assert.deepEqual(assertJson(await send(lenient.publicUrl, '/health/ready'), 200), { status: 'ready' });
  });
});
