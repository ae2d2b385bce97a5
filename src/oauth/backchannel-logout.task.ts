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
import {
  claimDueLogouts,
  deleteLogoutDeliveriesBefore,
  endLogoutAttempt,
  findLogoutTarget,
  type LogoutDeliveryRow,
} from './backchannel-logout.repo.ts';
import { attemptAll, leaseUntilFor, type PushDeps, pushEnd, pushSigned } from './signed-push.ts';

export const LOGOUT_TOKEN_TYP = 'logout+jwt';
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** Logout tokens are short-lived: a receiver may refuse one older than this. */
const LOGOUT_TOKEN_TTL_S = 120;
const CLAIM_BATCH = 20;
const USER_AGENT = 'ProudAuth-Logout/1';

export interface BackchannelLogoutDeps extends PushDeps {
  db: Db;
  keyStore: KeyStore;
  clock: Clock;
  publicOrigin: string;
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

async function end(
  deps: BackchannelLogoutDeps,
  holder: string,
  d: LogoutDeliveryRow,
  category: string,
  status: number | null,
): Promise<string> {
  const at = deps.clock.now();
  const { state, nextAttemptAt } = pushEnd(category, d.attempts, at);
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
  if (!target || uri === null) return end(deps, holder, d, 'client_gone', null);
  const signer = await deps.keyStore.activeSigner(d.realm_id);
  // Without a key this process can use, the attempt fails and is retried like a network fault.
  if (!signer) return end(deps, holder, d, 'no_signer', null);
  const now = deps.clock.now();
  const token = await signJwt(
    signer,
    LOGOUT_TOKEN_TYP,
    logoutTokenClaims(issuerOf(deps.publicOrigin, target.realm_name), d, now),
  );
  const r = await pushSigned(
    deps,
    uri,
    {
      'content-type': 'application/x-www-form-urlencoded',
      'cache-control': 'no-store',
      'user-agent': USER_AGENT,
    },
    new URLSearchParams({ logout_token: token }).toString(),
  );
  return end(deps, holder, d, r.category, r.status);
}

/** Claims due deliveries and attempts them, a few at a time. */
export async function deliverDueLogouts(
  deps: BackchannelLogoutDeps,
  holder: string,
  now: Date,
): Promise<TaskReport> {
  const leaseUntil = leaseUntilFor(deps, now);
  const claimed = await deps.db.tx((tx) => claimDueLogouts(tx, holder, now, leaseUntil, CLAIM_BATCH));
  return attemptAll(
    claimed,
    (d) => attemptLogout(deps, holder, d),
    (d, err) => {
      deps.log?.warn({ delivery: d.id, err: String(err) }, 'logout token attempt failed before it was sent');
      return end(deps, holder, d, 'network_error', null);
    },
  );
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
