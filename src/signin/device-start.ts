// The headless start with intent device (spec doc 1, headless start body: device_user_code;
// docs/oauth-device.md): the person who typed a user code signs in for the device's client. The
// transaction asks for what the device asked for; its completion approves the device
// authorization instead of issuing an authorization code, and a refusal denies it.
import { ACCOUNT_CLIENT_ID } from '../clients/builtin-clients.ts';
import { findClient } from '../clients/index.ts';
import { digestToken } from '../kernel/digest.ts';
import { withoutNul } from '../kernel/text.ts';
import { spendBudgets } from '../platform/abuse-budget.ts';
import type { Tx } from '../platform/db/db.ts';
import { networkOf } from '../platform/http/client-address.ts';
import { Problem } from '../platform/http/problem.ts';
import { cutUtf8 } from '../platform/utf8.ts';
import type { RealmRow } from '../realms/index.ts';
import { claimForTransaction, findWaitingByUserCode } from './device-authorizations.repo.ts';
import { scopeDemands, withScopeDemands } from './scope-demands.ts';
import type { SigninDeps } from './signin.deps.ts';
import { grantedAudiences, type StartParams } from './start.ts';
import { normalizeUserCode } from './user-code.ts';

export interface DeviceStartInput {
  clientId: string;
  deviceUserCode?: string;
  redirectUri?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  requestUri?: string;
  loginHint?: string;
  uiLocales?: string;
  organization?: string;
  userAgent?: string;
}

const refused = (detail: string, error = 'invalid_request') =>
  new Problem(400, 'invalid_request', detail, { error });

/**
 * Every typed user code spends an attempt of the client network's sign-in budget first (outside
 * the transaction, so a refused start still counts): 20^8 codes and a short lifetime leave
 * guessing no chance at that rate.
 */
export async function spendUserCodeAttempt(
  app: SigninDeps,
  clientAddress: string | null | undefined,
): Promise<void> {
  const network = networkOf(clientAddress);
  if (!network) return;
  const b = app.config.security.budgets;
  const verdict = await spendBudgets(
    app.db,
    [{ bucket: `signin:net:${network}`, limit: b.networkAttempts, windowMs: b.networkWindowMs }],
    app.clock.now(),
  );
  if (!verdict.ok) {
    app.metrics.rateLimited.inc({ surface: 'signin' });
    throw new Problem(429, 'rate_limited', 'too many sign-in attempts; try again later', undefined, {
      'retry-after': String(verdict.retryAfterSeconds),
    });
  }
}

/** The start parameters of a device sign-in, and the authorization the transaction will decide. */
export async function validateDeviceStart(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  input: DeviceStartInput,
): Promise<{ params: StartParams; deviceAuthorizationId: string }> {
  if (input.deviceUserCode === undefined) throw refused('intent device needs device_user_code');
  // A device sign-in returns to no redirect URI and redeems no code: these have no place in it.
  if (
    input.redirectUri !== undefined ||
    input.codeChallenge !== undefined ||
    input.codeChallengeMethod !== undefined ||
    input.requestUri !== undefined
  )
    throw refused('redirect_uri, code_challenge and request_uri do not apply to intent device');
  const code = normalizeUserCode(input.deviceUserCode);
  const now = app.clock.now();
  const row = code ? await findWaitingByUserCode(q, realm.id, digestToken(code), now) : null;
  if (!row) throw refused('the user code is unknown, expired or already used', 'invalid_grant');
  // The built-in login UI does not know the device's client: it starts as the account client.
  if (input.clientId !== row.client_id && input.clientId !== ACCOUNT_CLIENT_ID)
    throw refused('the user code was issued to another client', 'invalid_grant');
  const client = await findClient(q, realm.id, row.client_id);
  if (client?.state !== 'active') throw refused('the device client is not active', 'invalid_grant');
  const audiences = await grantedAudiences(q, realm, app.config.server.publicOrigin, client, row.resources);
  if (!audiences.ok) throw refused(audiences.refused, 'invalid_target');
  const demands = withScopeDemands(
    { acrValues: [], maxAge: null },
    scopeDemands(audiences.definitions, row.scopes),
  );
  const cut = (v: string | undefined, bytes: number) =>
    v === undefined ? null : cutUtf8(withoutNul(v), bytes);
  return {
    deviceAuthorizationId: row.id,
    params: {
      client,
      redirectUri: '',
      responseMode: 'query',
      scopes: row.scopes,
      resources: row.resources,
      state: null,
      nonce: null,
      codeChallenge: '',
      prompt: [],
      maxAge: demands.maxAge,
      acrValues: demands.acrValues,
      loginHint: cut(input.loginHint, 254),
      uiLocales: cut(input.uiLocales, 64),
      userAgent: cut(input.userAgent, 256),
      organization: input.organization ?? null,
      intent: 'device',
    },
  };
}

export const claimDeviceAuthorization = (q: Tx, realmId: string, id: string, transactionId: string) =>
  claimForTransaction(q, realmId, id, transactionId);
