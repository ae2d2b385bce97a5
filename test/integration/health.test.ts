import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHarness } from '../harness/harness.ts';

describe('health endpoints', () => {
  test('public liveness answers without touching dependencies', async (t) => {
    const h = await startHarness(t);
    const res = await h.get('/health/live');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });

  test('readiness is ready when the schema is current and every active realm has a key', async (t) => {
    const h = await startHarness(t);
    await h.createRealm();
    const res = await h.get('/health/ready');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ready' });
  });
});
