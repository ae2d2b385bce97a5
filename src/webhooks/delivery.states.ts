// Delivery states and the retry schedule (spec doc 2, Webhook subscription and delivery; Delivery
// semantics 1-2): after attempt n the next waits 5 s x 2^n plus up to 25 % jitter, at most 6 hours;
// the last allowed attempt failing dead-letters; HTTP 410 dead-letters at once.

import { afterFailure, type Backoff, backoffMs } from '../platform/work-queue/retry.ts';

export type DeliveryState = 'pending' | 'retrying' | 'delivered' | 'dead_letter';

/** How an attempt went, as the deliveries list and backlog name it. */
export type AttemptCategory =
  | 'success'
  | 'redirect'
  | 'client_error'
  | 'gone'
  | 'server_error'
  | 'timeout'
  | 'network_error'
  | 'egress_denied';

export const MAX_RESPONSE_BYTES = 64 * 1024;
/** 5 s x 2^n after attempt n is 10 s after the first, doubling; jitter up to 25 %; at most 6 hours. */
const BACKOFF: Backoff = { firstMs: 10_000, capMs: 6 * 3600 * 1000, jitter: 0.25 };

/** The wait after attempt `n` (1-based); `random` in [0, 1) draws the jitter. */
export const retryDelayMs = (n: number, random: number = Math.random()): number =>
  backoffMs(BACKOFF, n, random);

export function categoryOfStatus(status: number): AttemptCategory {
  if (status >= 200 && status < 300) return 'success';
  if (status === 410) return 'gone';
  if (status >= 300 && status < 400) return 'redirect';
  if (status >= 400 && status < 500) return 'client_error';
  return 'server_error';
}

export interface AttemptEnd {
  state: DeliveryState;
  /** When the next attempt is due (retrying only). */
  nextAttemptAt: Date | null;
}

/** The state after attempt number `attempts` ended in `category`. */
export function afterAttempt(
  category: AttemptCategory,
  attempts: number,
  maxAttempts: number,
  now: Date,
  random: number = Math.random(),
): AttemptEnd {
  if (category === 'success') return { state: 'delivered', nextAttemptAt: null };
  const next = afterFailure({ ...BACKOFF, maxAttempts }, attempts, category === 'gone', now, random);
  if (next.kind !== 'retry') return { state: 'dead_letter', nextAttemptAt: null };
  return { state: 'retrying', nextAttemptAt: next.at };
}
