// grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 section 3.4-3.5): the device
// polls with its device code. Waiting answers authorization_pending, polling faster than the
// interval answers slow_down and raises the interval by 5 s, a refusal answers access_denied, an
// expired code expired_token; an approved code is spent by the one request that gets the tokens.
import { digestToken } from '../../kernel/digest.ts';
import { type OAuthError, oauthError } from '../../kernel/oauth-error.ts';
import { maybeOne } from '../../platform/db/db.ts';
import { findLiveGrant, liveSessionSql } from '../../sessions/index.ts';
import {
  type DeviceAuthorizationRow,
  findByDeviceCode,
  lockByDeviceCode,
  markConsumed,
  recordPoll,
} from '../../signin/device-polling.ts';
import { mayHoldTokens } from '../../users/account.states.ts';
import { userMayActIn } from '../org-context.ts';
import { type GrantContext, requiredParam, resourceParam, type TokenResponse } from './grant-context.ts';
import { isRecoveryRestricted, restrictedAudienceError } from './recovery-restriction.ts';
import { withTokenHooks } from './token-hooks.ts';
import { chooseAudience, startRefreshFamily, type UserGrant, userTokens } from './user-tokens.ts';

export const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 section 3.5: what slow_down adds to the interval. */
const SLOW_DOWN_STEP_SECONDS = 5;

interface SessionFacts {
  live: boolean;
  transient: boolean;
  idle_seconds: number;
  absolute_expires_at: Date;
  auth_time: Date;
  amr: string[];
  acr: string;
  user_state: string;
  recovery_restricted: boolean;
}

type Outcome = { tokens: TokenResponse } | { refusal: OAuthError };

export async function deviceCodeGrant(base: GrantContext): Promise<TokenResponse> {
  const deviceCode = requiredParam(base, 'device_code');
  const requested = resourceParam(base);
  // Only an approved, unexpired code of this client names a user; a poll while pending calls nothing.
  const g = await withTokenHooks(base, DEVICE_CODE, async () => {
    const row = await findByDeviceCode(base.app.db, base.realm.id, digestToken(deviceCode));
    const live = row && new Date(row.expires_at).getTime() > base.now.getTime();
    if (!live || row.client_id !== base.caller.client.client_id || row.status !== 'approved' || !row.user_id)
      return null;
    return { user_id: row.user_id, scopes: row.granted_scopes ?? row.scopes, org_id: row.org_id };
  });
  const outcome = await g.app.db.tx(async (tx): Promise<Outcome> => {
    const row = await lockByDeviceCode(tx, g.realm.id, digestToken(deviceCode));
    // A code of another client is not this client's to learn anything about.
    if (!row || row.client_id !== g.caller.client.client_id)
      return { refusal: oauthError.invalidGrant('unknown device code') };
    if (row.status === 'consumed')
      return { refusal: oauthError.invalidGrant('the device code was already used') };
    if (new Date(row.expires_at).getTime() <= g.now.getTime())
      return { refusal: oauthError.expiredToken('the device code has expired') };
    if (row.status === 'denied') return { refusal: oauthError.accessDenied('the user refused the device') };
    if (row.status === 'pending') return { refusal: await poll(g, tx, row) };
    return approved(g, tx, row, requested);
  });
  if ('refusal' in outcome) throw outcome.refusal;
  return outcome.tokens;
}

/** A poll while the person has not decided: pending, or slow_down when it came too early. */
async function poll(
  g: GrantContext,
  tx: Parameters<typeof recordPoll>[0],
  row: DeviceAuthorizationRow,
): Promise<OAuthError> {
  const last = row.last_polled_at ? new Date(row.last_polled_at).getTime() : null;
  const tooSoon = last !== null && g.now.getTime() - last < row.interval_seconds * 1000;
  const interval = tooSoon ? row.interval_seconds + SLOW_DOWN_STEP_SECONDS : row.interval_seconds;
  await recordPoll(tx, row, interval, g.now);
  return tooSoon
    ? oauthError.pollingTooFast(`poll at most every ${interval} seconds`)
    : oauthError.authorizationPending('the user has not approved the device yet');
}

async function approved(
  g: GrantContext,
  tx: Parameters<typeof recordPoll>[0],
  row: DeviceAuthorizationRow,
  requested: string | null,
): Promise<Outcome> {
  const ended = { refusal: oauthError.invalidGrant('the sign-in has ended') };
  if (!row.user_id || !row.session_id) return ended;
  const session = await maybeOne<SessionFacts>(
    tx,
    `select (${liveSessionSql('s', '$3')}) as live, s.transient, s.idle_seconds, s.absolute_expires_at,
            s.auth_time, s.amr, s.acr, u.state as user_state, s.recovery_restricted
       from sessions s join users u on u.realm_id = s.realm_id and u.id = s.user_id
      where s.realm_id = $1 and s.id = $2`,
    [g.realm.id, row.session_id, g.now],
  );
  if (!session?.live || !mayHoldTokens(session.user_state)) return ended;
  const grant = await findLiveGrant(tx, g.realm.id, row.user_id, row.client_id, row.org_id);
  if (!grant) return { refusal: oauthError.invalidGrant('the grant was revoked') };
  if (row.org_id !== null && !(await userMayActIn(tx, g.realm.id, row.org_id, row.user_id, g.now)))
    return { refusal: oauthError.invalidGrant('the organization membership is not active') };
  const user: UserGrant = {
    userId: row.user_id,
    grantId: grant.id,
    orgId: row.org_id,
    authentication: {
      sessionId: row.session_id,
      authTime: new Date(session.auth_time),
      amr: session.amr,
      acr: session.acr,
    },
    scopes: row.granted_scopes ?? row.scopes,
    resources: row.resources,
    nonce: null,
  };
  const audience = chooseAudience(g, user, requested);
  const restricted = isRecoveryRestricted(session.recovery_restricted, session.user_state);
  const refused = restrictedAudienceError(g, audience, restricted);
  if (refused) return { refusal: oauthError.invalidGrant(refused) };
  const tokens = await userTokens(g, tx, user, audience, { withIdToken: true });
  const family = await startRefreshFamily(g, tx, user, {
    transient: session.transient,
    idleSeconds: session.idle_seconds,
    absoluteExpiresAt: new Date(session.absolute_expires_at),
  });
  await markConsumed(tx, row, g.now);
  return { tokens: { ...tokens.response, ...(family ? { refresh_token: family.token } : {}) } };
}
