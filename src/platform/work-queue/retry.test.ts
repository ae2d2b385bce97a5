import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterFailure, backoffMs, overAttemptLimit, type RetryPolicy } from './retry.ts';

const policy: RetryPolicy = { firstMs: 10_000, capMs: 3_600_000, maxAttempts: 3 };
const now = new Date(Date.UTC(2033, 0, 1));

test('case=backoff doubles from the first wait, adds jitter and stops at the cap', () => {
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => backoffMs(policy, n)),
    [10_000, 20_000, 40_000, 80_000],
  );
  assert.equal(backoffMs(policy, 0), 10_000, 'no attempt yet counts as the first');
  assert.equal(backoffMs(policy, 30), 3_600_000);
  const jittered = { ...policy, jitter: 0.25 };
  assert.equal(backoffMs(jittered, 1, 0), 10_000);
  assert.equal(backoffMs(jittered, 1, 0.999999), 12_499);
  for (let i = 0; i < 50; i++) {
    const d = backoffMs(jittered, 2);
    assert.ok(d >= 20_000 && d < 25_000, String(d));
  }
  assert.equal(backoffMs(jittered, 30, 0.5), 3_600_000, 'the cap holds after jitter');
});

test('case=a failure retries until the last allowed attempt; a permanent one never does', () => {
  assert.deepEqual(afterFailure(policy, 1, false, now, 0), {
    kind: 'retry',
    at: new Date(now.getTime() + 10_000),
  });
  assert.deepEqual(afterFailure(policy, 3, false, now), { kind: 'exhausted' });
  assert.deepEqual(afterFailure(policy, 1, true, now), { kind: 'permanent' });
  assert.equal(overAttemptLimit(policy, 3), false);
  assert.equal(overAttemptLimit(policy, 4), true);
});
