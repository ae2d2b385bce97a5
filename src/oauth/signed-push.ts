// What back-channel logout and Shared Signals share when they push a signed token to a receiver:
// one POST through the egress guard (private networks only through the operator's allowlist of
// specific networks) and the residency list, how its answer is judged, and the retry rule of both
// channels (document 2, Delivery semantics 5: up to 8 retries).
import type { TaskReport } from '../kernel/task.ts';
import { EgressGuard } from '../platform/net/egress-guard.ts';
import type { OutboundHttp, OutboundResult } from '../platform/net/outbound-http.ts';
import { residencyAllows } from '../platform/net/residency.ts';
import { afterFailure, type RetryPolicy } from '../platform/work-queue/retry.ts';

/** One first attempt and up to 8 retries, 5 s doubling with up to 25 % jitter. */
export const PUSH_RETRY: RetryPolicy = { firstMs: 5_000, capMs: 3_600_000, jitter: 0.25, maxAttempts: 9 };
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface PushDeps {
  outbound: OutboundHttp;
  /** delivery.egress_allowlist */
  egressAllowlist: readonly string[];
  /** privacy.residency.allowed_destinations (empty: no residency rule) */
  allowedDestinations: readonly string[];
  /** delivery.webhook_timeout, the per-attempt deadline of every push channel. */
  webhookTimeoutMs: number;
}

export type PushCategory =
  | 'success'
  | 'rejected'
  | 'server_error'
  | 'timeout'
  | 'network_error'
  | 'egress_denied';

export interface PushResult {
  category: PushCategory;
  status: number | null;
}

function categoryOf(r: OutboundResult): PushResult {
  if (r.kind === 'response') {
    const s = r.status;
    if (s >= 200 && s < 300) return { category: 'success', status: s };
    if (s >= 500 || s === 408 || s === 429) return { category: 'server_error', status: s };
    return { category: 'rejected', status: s };
  }
  if (r.kind === 'egress_denied') return { category: 'egress_denied', status: null };
  if (r.kind === 'timeout') return { category: 'timeout', status: null };
  return { category: 'network_error', status: null };
}

/** Faults that may pass: a server error, 408, 429, a timeout, a network error. */
export const isRetryable = (category: string): boolean =>
  category === 'server_error' ||
  category === 'timeout' ||
  category === 'network_error' ||
  category === 'no_signer';

export async function pushSigned(
  deps: PushDeps,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<PushResult> {
  if (!residencyAllows(new URL(url).hostname, deps.allowedDestinations))
    return { category: 'egress_denied', status: null };
  const response = await deps.outbound.post({
    url,
    headers,
    body,
    guard: new EgressGuard({ allowlist: deps.egressAllowlist, allowPrivate: false }),
    timeoutMs: deps.webhookTimeoutMs,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
  return categoryOf(response);
}

export interface PushEnd {
  state: 'delivered' | 'retrying' | 'failed';
  nextAttemptAt: Date | null;
}

/** The state an attempt leaves its item in. */
export function pushEnd(category: string, attempts: number, at: Date): PushEnd {
  if (category === 'success') return { state: 'delivered', nextAttemptAt: null };
  const next = afterFailure(PUSH_RETRY, attempts, !isRetryable(category), at);
  return next.kind === 'retry'
    ? { state: 'retrying', nextAttemptAt: next.at }
    : { state: 'failed', nextAttemptAt: null };
}

const PARALLEL = 8;
/** The lease outlives the attempt's deadline by this margin before another worker may retry it. */
const LEASE_MARGIN_MS = 30_000;

export const leaseUntilFor = (deps: PushDeps, now: Date): Date =>
  new Date(now.getTime() + deps.webhookTimeoutMs + LEASE_MARGIN_MS);

/**
 * Attempts claimed items a few at a time. An attempt that throws before anything was sent (a key
 * that cannot be unsealed, say) is ended by `failed` as a network fault, so backoff and the limit
 * still apply. Answers how many ended in each state.
 */
export async function attemptAll<T>(
  claimed: readonly T[],
  attempt: (item: T) => Promise<string>,
  failed: (item: T, err: unknown) => Promise<string>,
): Promise<TaskReport> {
  const report: TaskReport = {};
  for (let i = 0; i < claimed.length; i += PARALLEL) {
    const ends = await Promise.all(
      claimed
        .slice(i, i + PARALLEL)
        .map((item) => attempt(item).catch((err: unknown) => failed(item, err).catch(() => 'error'))),
    );
    for (const e of ends) report[e] = (report[e] ?? 0) + 1;
  }
  return report;
}
