// Back-channel logout delivery (OpenID Connect Back-Channel Logout 1.0; document 2, Delivery
// semantics 5 and Revocation exposure): worker task backchannel_logout.deliver claims queued
// deliveries under a lease, signs a logout token with the realm's active key, and POSTs it to the
// client's backchannel_logout_uri through the egress guard, outside any transaction. A receiver
// answering 2xx ends it; a 5xx, 408, 429, timeout or network fault is retried with backoff, up to
// 8 retries; any other answer, an address the guard refuses, or a client that no longer has the
// URI ends it as failed. Each attempt counts in service_delivery_total{channel="backchannel_logout"}.

import { issuerOf } from '../kernel/audiences.ts';
import type { TaskReport } from '../kernel/task.ts';
import { epochSeconds, signJwt } from '../keys/jws.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { Clock } from '../platform/clock.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import { EgressGuard } from '../platform/net/egress-guard.ts';
import type { OutboundHttp, OutboundResult } from '../platform/net/outbound-http.ts';
import { residencyAllows } from '../platform/net/residency.ts';
import { afterFailure, type RetryPolicy } from '../platform/work-queue/retry.ts';
import {
  claimDueLogouts,
  deleteLogoutDeliveriesBefore,
  endLogoutAttempt,
  findLogoutTarget,
  type LogoutDeliveryRow,
  type LogoutDeliveryState,
} from './backchannel-logout.repo.ts';

export const LOGOUT_TOKEN_TYP = 'logout+jwt';
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Logout tokens are short-lived: a receiver may refuse one older than this. */
const LOGOUT_TOKEN_TTL_S = 120;
/** One first attempt and up to 8 retries (document 2, Delivery semantics 5). */
export const LOGOUT_RETRY: RetryPolicy = { firstMs: 5_000, capMs: 3_600_000, jitter: 0.25, maxAttempts: 9 };
const CLAIM_BATCH = 20;
const PARALLEL = 8;
const LEASE_MARGIN_MS = 30_000;
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'ProudAuth-Logout/1';

export interface BackchannelLogoutDeps {
  db: Db;
  keyStore: KeyStore;
  clock: Clock;
  outbound: OutboundHttp;
  publicOrigin: string;
  /** delivery.egress_allowlist: the only private networks a logout receiver may be on. */
  egressAllowlist: readonly string[];
  /** privacy.residency.allowed_destinations (empty: no residency rule). */
  allowedDestinations: readonly string[];
  /** delivery.webhook_timeout, the same per-attempt deadline as webhooks. */
  webhookTimeoutMs: number;
  /** privacy.history_retention */
  historyRetentionMs: number;
  /** Counts each attempt in service_delivery_total{channel="backchannel_logout"}. */
  logoutDeliveryEnded?: (outcome: string) => void;
  log?: Logger;
}

/** The claims of one logout token (section 2.4): sub and sid, the event, never a nonce. */
export function logoutTokenClaims(
  issuer: string,
  d: Pick<LogoutDeliveryRow, 'id' | 'client_id' | 'user_id' | 'session_id'>,
  now: Date,
): Record<string, unknown> {
  const iat = epochSeconds(now);
  return {
    iss: issuer,
    aud: d.client_id,
    iat,
    exp: iat + LOGOUT_TOKEN_TTL_S,
    jti: d.id,
    sub: d.user_id,
    sid: d.session_id,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  };
}

type Category = 'success' | 'rejected' | 'server_error' | 'timeout' | 'network_error' | 'egress_denied';

function categoryOf(r: OutboundResult): { category: Category; status: number | null } {
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

const RETRYABLE: ReadonlySet<Category> = new Set(['server_error', 'timeout', 'network_error']);

async function end(
  deps: BackchannelLogoutDeps,
  holder: string,
  d: LogoutDeliveryRow,
  category: string,
  status: number | null,
  retryable: boolean,
): Promise<string> {
  const at = deps.clock.now();
  let state: LogoutDeliveryState = 'delivered';
  let nextAttemptAt: Date | null = null;
  if (category !== 'success') {
    const next = afterFailure(LOGOUT_RETRY, d.attempts, !retryable, at);
    state = next.kind === 'retry' ? 'retrying' : 'failed';
    nextAttemptAt = next.kind === 'retry' ? next.at : null;
  }
  const ok = await endLogoutAttempt(deps.db, d, holder, { state, nextAttemptAt, status, category, at });
  const outcome = ok ? state : 'lease_lost';
  deps.logoutDeliveryEnded?.(outcome);
  return outcome;
}

/** One attempt of one claimed delivery; answers the state it ended in, or 'lease_lost'. */
export async function attemptLogout(
  deps: BackchannelLogoutDeps,
  holder: string,
  d: LogoutDeliveryRow,
): Promise<string> {
  const target = await findLogoutTarget(deps.db, d.realm_id, d.client_id);
  const uri = target?.backchannel_logout_uri ?? null;
  // The client was disabled or deleted, or dropped its URI, after the session ended.
  if (!target || uri === null) return end(deps, holder, d, 'client_gone', null, false);
  const signer = await deps.keyStore.activeSigner(d.realm_id);
  // Without a key this process can use, the attempt fails and is retried like a network fault.
  if (!signer) return end(deps, holder, d, 'no_signer', null, true);
  const now = deps.clock.now();
  const token = await signJwt(
    signer,
    LOGOUT_TOKEN_TYP,
    logoutTokenClaims(issuerOf(deps.publicOrigin, target.realm_name), d, now),
  );
  const response: OutboundResult = residencyAllows(new URL(uri).hostname, deps.allowedDestinations)
    ? await deps.outbound.post({
        url: uri,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'cache-control': 'no-store',
          'user-agent': USER_AGENT,
        },
        body: new URLSearchParams({ logout_token: token }).toString(),
        // Private receivers only through the operator's allowlist of specific networks.
        guard: new EgressGuard({ allowlist: deps.egressAllowlist, allowPrivate: false }),
        timeoutMs: deps.webhookTimeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      })
    : { kind: 'egress_denied', reason: 'residency' };
  const r = categoryOf(response);
  return end(deps, holder, d, r.category, r.status, RETRYABLE.has(r.category));
}

/** Claims due deliveries and attempts them, a few at a time. */
export async function deliverDueLogouts(
  deps: BackchannelLogoutDeps,
  holder: string,
  now: Date,
): Promise<TaskReport> {
  const report: TaskReport = {};
  const leaseUntil = new Date(now.getTime() + deps.webhookTimeoutMs + LEASE_MARGIN_MS);
  const claimed = await deps.db.tx((tx) => claimDueLogouts(tx, holder, now, leaseUntil, CLAIM_BATCH));
  for (let i = 0; i < claimed.length; i += PARALLEL) {
    const ends = await Promise.all(
      claimed.slice(i, i + PARALLEL).map((d) =>
        attemptLogout(deps, holder, d).catch(async (err: unknown) => {
          deps.log?.warn(
            { delivery: d.id, err: String(err) },
            'logout token attempt failed before it was sent',
          );
          return end(deps, holder, d, 'network_error', null, true).catch(() => 'error');
        }),
      ),
    );
    for (const e of ends) report[e] = (report[e] ?? 0) + 1;
  }
  return report;
}

export const deliverLogoutsTask =
  (holder: string) =>
  (deps: BackchannelLogoutDeps, now: Date): Promise<TaskReport> =>
    deliverDueLogouts(deps, holder, now);

/** Deliveries are deleted privacy.history_retention after creation (document 2, Data lifecycle 3). */
export async function cleanupLogoutDeliveries(deps: BackchannelLogoutDeps, now: Date): Promise<TaskReport> {
  const cutoff = new Date(now.getTime() - deps.historyRetentionMs);
  return { deleted: await deleteLogoutDeliveriesBefore(deps.db, cutoff, 5000) };
}
