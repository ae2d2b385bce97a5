// Shared Signals push delivery (OpenID SSF 1.0 with RFC 8935 push; document 2, Delivery
// semantics 5 and Data lifecycle 3): worker task ssf.deliver runs every 2 s and takes up to 50 due
// events a run under leases; each is signed as a security event token (RFC 8417, typ
// secevent+jwt) with the realm's active key and POSTed to the stream's endpoint through the egress
// guard. Failures are retried as back-channel logout tokens are (signed-push.ts), up to 8 times.
// Events of a paused stream wait; a disabled stream's events fail. ssf.cleanup expires events
// undelivered after 7 days and deletes them 14 days after they finished.
import { issuerOf } from '../kernel/audiences.ts';
import type { TaskReport } from '../kernel/task.ts';
import { epochSeconds, signJwt } from '../keys/jws.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { Clock } from '../platform/clock.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import {
  claimDueEvents,
  endEventAttempt,
  expireAndDeleteEvents,
  findStreamForDelivery,
  postponeEvent,
  type SsfEventRow,
  VERIFICATION_EVENT,
} from './shared-signals.repo.ts';
import { attemptAll, leaseUntilFor, type PushDeps, pushEnd, pushSigned } from './signed-push.ts';

export const SET_TYP = 'secevent+jwt';
/** Up to 50 events a run (document 2, Delivery semantics 5). */
export const SSF_EVENTS_PER_RUN = 50;
const PAUSED_RECHECK_MS = 60_000;
const DAY_MS = 86_400_000;
const USER_AGENT = 'ProudAuth-SSF/1';

export interface SharedSignalsDeps extends PushDeps {
  db: Db;
  keyStore: KeyStore;
  clock: Clock;
  publicOrigin: string;
  log?: Logger;
}

/** The SET of one queued event (RFC 8417; SSF 1.0 sub_id with the iss_sub format). */
export function setClaims(
  issuer: string,
  audience: string,
  e: SsfEventRow,
  now: Date,
): Record<string, unknown> {
  const { at, session_id: _session, ...members } = e.data as Record<string, unknown>;
  const occurred = typeof at === 'string' ? epochSeconds(new Date(at)) : epochSeconds(e.created_at);
  const body: Record<string, unknown> =
    e.event_type === VERIFICATION_EVENT ? members : { ...members, event_timestamp: occurred };
  return {
    iss: issuer,
    aud: audience,
    iat: epochSeconds(now),
    jti: e.id,
    sub_id:
      e.user_id === null
        ? { format: 'opaque', id: e.stream_id }
        : { format: 'iss_sub', iss: issuer, sub: e.user_id },
    events: { [e.event_type]: body },
  };
}

async function end(
  deps: SharedSignalsDeps,
  holder: string,
  e: SsfEventRow,
  category: string,
  status: number | null,
) {
  const at = deps.clock.now();
  const { state, nextAttemptAt } = pushEnd(category, e.attempts, at);
  const ok = await endEventAttempt(deps.db, e, holder, { state, nextAttemptAt, status, category, at });
  return ok ? state : 'lease_lost';
}

export async function attemptEvent(deps: SharedSignalsDeps, holder: string, e: SsfEventRow): Promise<string> {
  const stream = await findStreamForDelivery(deps.db, e.realm_id, e.stream_id);
  if (!stream || stream.status === 'disabled') return end(deps, holder, e, 'stream_disabled', null);
  if (stream.status === 'paused') {
    const ok = await postponeEvent(
      deps.db,
      e,
      holder,
      new Date(deps.clock.now().getTime() + PAUSED_RECHECK_MS),
    );
    return ok ? 'postponed' : 'lease_lost';
  }
  const signer = await deps.keyStore.activeSigner(e.realm_id);
  if (!signer) return end(deps, holder, e, 'no_signer', null);
  const issuer = issuerOf(deps.publicOrigin, stream.realm_name);
  const token = await signJwt(signer, SET_TYP, setClaims(issuer, stream.client_id, e, deps.clock.now()));
  const r = await pushSigned(
    deps,
    stream.endpoint_url,
    { 'content-type': 'application/secevent+jwt', accept: 'application/json', 'user-agent': USER_AGENT },
    token,
  );
  return end(deps, holder, e, r.category, r.status);
}

export const deliverSharedSignalsTask =
  (holder: string) =>
  async (deps: SharedSignalsDeps, now: Date): Promise<TaskReport> => {
    const leaseUntil = leaseUntilFor(deps, now);
    const claimed = await deps.db.tx((tx) => claimDueEvents(tx, holder, now, leaseUntil, SSF_EVENTS_PER_RUN));
    return attemptAll(
      claimed,
      (e) => attemptEvent(deps, holder, e),
      (e, err) => {
        deps.log?.warn({ event: e.id, err: String(err) }, 'security event attempt failed before it was sent');
        return end(deps, holder, e, 'network_error', null);
      },
    );
  };

export async function cleanupSharedSignals(deps: SharedSignalsDeps, now: Date): Promise<TaskReport> {
  const t = now.getTime();
  return expireAndDeleteEvents(deps.db, new Date(t - 7 * DAY_MS), new Date(t - 14 * DAY_MS), now, 5000);
}
