// The retry schedule and the end of an attempt (spec doc 2, Delivery semantics 2; Webhook
// subscription and delivery).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { afterAttempt, categoryOfStatus, retryDelayMs } from './delivery.states.ts';

describe('delivery states', () => {
  test('5 s x 2^n, up to 25 % jitter, at most 6 hours', () => {
    assert.equal(retryDelayMs(1, 0), 10_000);
    assert.equal(retryDelayMs(2, 0), 20_000);
    assert.equal(retryDelayMs(1, 0.999999), 12_499);
    assert.equal(retryDelayMs(11, 0), 5_000 * 2048);
    assert.equal(retryDelayMs(12, 0), 5_000 * 4096);
    assert.equal(retryDelayMs(12, 0.5), 6 * 3600 * 1000);
    assert.equal(retryDelayMs(30, 0.5), 6 * 3600 * 1000);
    for (let n = 1; n < 13; n++) {
      const d = retryDelayMs(n);
      assert.ok(
        d >= Math.min(5_000 * 2 ** n, 21_600_000) && d <= Math.min(5_000 * 2 ** n * 1.25, 21_600_000),
      );
    }
  });

  test('status categories: 3xx is a failure, 410 is gone', () => {
    assert.equal(categoryOfStatus(200), 'success');
    assert.equal(categoryOfStatus(204), 'success');
    assert.equal(categoryOfStatus(301), 'redirect');
    assert.equal(categoryOfStatus(307), 'redirect');
    assert.equal(categoryOfStatus(404), 'client_error');
    assert.equal(categoryOfStatus(410), 'gone');
    assert.equal(categoryOfStatus(503), 'server_error');
  });

  test('failures retry until the last attempt; 410 and the last failure dead-letter', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    assert.deepEqual(afterAttempt('success', 3, 12, now), { state: 'delivered', nextAttemptAt: null });
    assert.deepEqual(afterAttempt('gone', 1, 12, now), { state: 'dead_letter', nextAttemptAt: null });
    assert.deepEqual(afterAttempt('timeout', 12, 12, now), { state: 'dead_letter', nextAttemptAt: null });
    const r = afterAttempt('redirect', 1, 12, now, 0);
    assert.equal(r.state, 'retrying');
    assert.equal(r.nextAttemptAt?.getTime(), now.getTime() + 10_000);
  });
});
