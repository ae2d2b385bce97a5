// Storing a pushed authorization request (RFC 9126 section 2): the parameters, checked as the
// authorization endpoint checks them, kept under the digest of a fresh request_uri for 60 seconds
// (spec doc 2, default lifetimes: fixed), for the one client that pushed them.
import { recorder } from '../audit/index.ts';
import { digestToken } from '../kernel/digest.ts';
import type { Tx } from '../platform/db/db.ts';
import { randomToken } from '../platform/ids.ts';
import type { RealmRow } from '../realms/index.ts';
import { AuthorizationRequestError, REQUEST_URI_PREFIX, withRequestObject } from './authorization-request.ts';
import { insertPushedRequest } from './pushed-requests.repo.ts';
import type { SigninDeps } from './signin.deps.ts';
import type { StartInput } from './start.ts';
import { validateStart } from './start.ts';

export const PUSHED_REQUEST_TTL_SECONDS = 60;

export type PushOutcome =
  | { ok: true; requestUri: string; expiresIn: number }
  | { ok: false; error: string; detail: string };

/** `input` comes from the authenticated client `clientId`; a client_id sent in it must be that one. */
export async function pushAuthorizationRequest(
  app: SigninDeps,
  q: Tx,
  realm: RealmRow,
  clientId: string,
  input: StartInput,
  correlationId: string,
): Promise<PushOutcome> {
  if (input.requestUri !== undefined)
    return { ok: false, error: 'invalid_request', detail: 'request_uri cannot be pushed' };
  if (input.clientId !== undefined && input.clientId !== clientId)
    return { ok: false, error: 'invalid_request', detail: 'client_id is not the authenticated client' };
  let params: StartInput = { ...input, clientId };
  try {
    if (params.request !== undefined)
      params = await withRequestObject(app, q, realm, { ...params, request: params.request });
  } catch (e) {
    if (e instanceof AuthorizationRequestError) return { ok: false, error: e.error, detail: e.message };
    throw e;
  }
  const started = await validateStart(
    q,
    realm,
    params,
    'authorize',
    app.config.server.publicOrigin,
    app.grantTypeControls,
  );
  if (!started.ok) return { ok: false, error: started.failure.error, detail: started.failure.detail };
  const now = app.clock.now();
  const requestUri = `${REQUEST_URI_PREFIX}${randomToken(32)}`;
  const { userAgent: _ua, ...stored } = params;
  await insertPushedRequest(
    q,
    realm.id,
    digestToken(requestUri),
    { clientId, params: stored, expiresAt: new Date(now.getTime() + PUSHED_REQUEST_TTL_SECONDS * 1000) },
    now,
  );
  const actor = { type: 'client', id: clientId } as const;
  await recorder(q, { realmId: realm.id, actor, correlationId, now }).audit(
    'oauth.authorization_request.pushed',
    {
      category: 'security',
      data: { client_id: clientId },
    },
  );
  return { ok: true, requestUri, expiresIn: PUSHED_REQUEST_TTL_SECONDS };
}
