import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idleUntil, lifetimesFor, offlineLifetimesOf, sessionPolicyOf } from './session-lifetimes.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const plain = { rememberMe: false, transient: false };
const remembered = { rememberMe: true, transient: false };
const transient = { rememberMe: false, transient: true };

test('absent members take the Limits defaults', () => {
  const p = sessionPolicyOf(undefined);
  assert.deepEqual(lifetimesFor(plain, p), { idleMs: 30 * MINUTE, absoluteMs: 12 * HOUR });
  assert.deepEqual(lifetimesFor(remembered, p), { idleMs: 7 * DAY, absoluteMs: 30 * DAY });
  assert.deepEqual(lifetimesFor(transient, p), { idleMs: 30 * MINUTE, absoluteMs: HOUR });
  assert.deepEqual(offlineLifetimesOf({}), { idleMs: 7 * DAY, absoluteMs: 30 * DAY });
});

test('the policy sets the lengths; the idle length never passes the absolute one', () => {
  const p = sessionPolicyOf({ idle_timeout_minutes: 5, absolute_timeout_hours: 2, remember_me_days: 3 });
  assert.deepEqual(lifetimesFor(plain, p), { idleMs: 5 * MINUTE, absoluteMs: 2 * HOUR });
  assert.deepEqual(lifetimesFor(remembered, p), { idleMs: 3 * DAY, absoluteMs: 3 * DAY });
  const long = sessionPolicyOf({ idle_timeout_minutes: 10080, absolute_timeout_hours: 1 });
  assert.deepEqual(lifetimesFor(plain, long), { idleMs: HOUR, absoluteMs: HOUR });
  assert.deepEqual(offlineLifetimesOf({ refresh_token_idle_days: 40, refresh_token_absolute_days: 10 }), {
    idleMs: 10 * DAY,
    absoluteMs: 10 * DAY,
  });
});

test('remember-me never ends sooner than the same session without it', () => {
  const p = sessionPolicyOf({
    idle_timeout_minutes: 10080,
    absolute_timeout_hours: 720,
    remember_me_days: 1,
  });
  assert.deepEqual(lifetimesFor(remembered, p), lifetimesFor(plain, p));
});

test('a transient session lasts at most an hour whatever the policy says', () => {
  const p = sessionPolicyOf({ idle_timeout_minutes: 10080, absolute_timeout_hours: 720 });
  assert.deepEqual(lifetimesFor(transient, p), { idleMs: HOUR, absoluteMs: HOUR });
  assert.deepEqual(lifetimesFor({ rememberMe: true, transient: true }, p), {
    idleMs: HOUR,
    absoluteMs: HOUR,
  });
});

test('values outside the policy ranges are not trusted', () => {
  const p = sessionPolicyOf({ idle_timeout_minutes: 1, absolute_timeout_hours: '3', remember_me_days: 1.5 });
  assert.deepEqual(p, sessionPolicyOf(null));
});

test('activity moves the idle expiry on, never past the absolute expiry', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  assert.equal(
    idleUntil(now, 1800, new Date('2026-01-02T00:00:00Z')).toISOString(),
    '2026-01-01T00:30:00.000Z',
  );
  assert.equal(
    idleUntil(now, 1800, new Date('2026-01-01T00:10:00Z')).toISOString(),
    '2026-01-01T00:10:00.000Z',
  );
});
