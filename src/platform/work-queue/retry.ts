// The pure rules every work queue applies after a failed attempt: how long to wait (exponential
// backoff with optional jitter, capped), and when to stop trying. Each queue names its numbers
// (jobs: docs/jobs.md; notifications: docs/delivery.md; webhook deliveries: docs/webhooks.md) and
// maps the outcome onto its own states.

export interface Backoff {
  /** The wait after the first failed attempt; it doubles with each further one. */
  readonly firstMs: number;
  readonly capMs: number;
  /** Up to this share of the wait is added at random (0.25: up to 25 %); none when absent. */
  readonly jitter?: number;
}

export interface RetryPolicy extends Backoff {
  /** Attempts (claims, crashed ones included) before the item is given up. */
  readonly maxAttempts: number;
}

/** The wait after failed attempt number `attempts` (1-based); `random` in [0, 1) draws the jitter. */
export function backoffMs(b: Backoff, attempts: number, random: number = Math.random()): number {
  const base = b.firstMs * 2 ** Math.max(0, attempts - 1);
  return Math.min(b.capMs, Math.floor(base * (1 + (b.jitter ?? 0) * random)));
}

/** What follows a failed attempt. */
export type AfterFailure =
  | { readonly kind: 'retry'; readonly at: Date }
  /** The failure says trying again cannot help (a 410, an SMTP 5xx, a bad request). */
  | { readonly kind: 'permanent' }
  /** The last allowed attempt failed. */
  | { readonly kind: 'exhausted' };

export function afterFailure(
  policy: RetryPolicy,
  attempts: number,
  permanent: boolean,
  now: Date,
  random: number = Math.random(),
): AfterFailure {
  if (permanent) return { kind: 'permanent' };
  if (attempts >= policy.maxAttempts) return { kind: 'exhausted' };
  return { kind: 'retry', at: new Date(now.getTime() + backoffMs(policy, attempts, random)) };
}

/**
 * Whether a claim is over the limit before anything ran: attempts count claims, so a worker that
 * crashes on an item every time uses them up too, and the item is given up instead of looping.
 */
export const overAttemptLimit = (policy: RetryPolicy, attempts: number): boolean =>
  attempts > policy.maxAttempts;
