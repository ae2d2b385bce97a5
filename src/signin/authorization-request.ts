// What an authorization request asks for, before validateStart checks it: the parameters a client
// pushed earlier (RFC 9126, request_uri), those of a signed request object (RFC 9101, request),
// or the ones sent as such. A client or realm that requires pushed requests gets nothing else.
import { findClientJwks } from '../clients/index.ts';
import { digestToken } from '../kernel/digest.ts';
import type { Queryable } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { policyValue } from '../realms/index.ts';
import { issuerOf } from './complete.ts';
import { takePushedRequest } from './pushed-requests.repo.ts';
import { RequestObjectError, verifyRequestObject, withRequestObjectParams } from './request-object.ts';
import type { SigninDeps } from './signin.deps.ts';
import type { StartInput } from './start.ts';
import { StartReads } from './start-reads.ts';

/** RFC 9126 section 2.2: the URN prefix of the request_uri values this service hands out. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** A refusal of the request as a whole, answered to the caller (never to the redirect URI). */
export class AuthorizationRequestError extends Error {
  readonly error: 'invalid_request' | 'invalid_request_uri' | 'invalid_request_object';
  constructor(error: AuthorizationRequestError['error'], detail: string) {
    super(detail);
    this.error = error;
  }
}

/** The request object's parameters in place of the ones sent beside it; `clientId` is required. */
export async function withRequestObject(
  app: SigninDeps,
  q: Queryable,
  realm: RealmRow,
  input: StartInput & { request: string },
  reads: StartReads = new StartReads(q, realm.id),
): Promise<StartInput> {
  const clientId = input.clientId;
  if (!clientId) throw new AuthorizationRequestError('invalid_request', 'client_id is required with request');
  const client = await reads.client(clientId);
  if (client?.state !== 'active')
    throw new AuthorizationRequestError('invalid_request', 'unknown or inactive client_id');
  try {
    const payload = await verifyRequestObject(input.request, {
      clientId,
      jwks: await findClientJwks(q, realm.id, clientId),
      issuer: issuerOf(app, realm),
      now: app.clock.now(),
      clockSkewSeconds: Math.floor(app.config.tokens.clockSkewMs / 1000),
    });
    return withRequestObjectParams(input, payload);
  } catch (e) {
    if (e instanceof RequestObjectError)
      throw new AuthorizationRequestError('invalid_request_object', e.message);
    throw e;
  }
}

/** Spends the pushed request named by request_uri; it must belong to the client sending it. */
async function fromPushedRequest(
  app: SigninDeps,
  q: Queryable,
  realm: RealmRow,
  input: StartInput & { requestUri: string },
): Promise<StartInput> {
  if (input.request !== undefined)
    throw new AuthorizationRequestError('invalid_request', 'request and request_uri cannot both be sent');
  if (!input.clientId)
    throw new AuthorizationRequestError('invalid_request', 'client_id is required with request_uri');
  const refused = () =>
    new AuthorizationRequestError(
      'invalid_request_uri',
      'request_uri is unknown, used, expired or not this client',
    );
  if (!input.requestUri.startsWith(REQUEST_URI_PREFIX)) throw refused();
  const pushed = await takePushedRequest(q, realm.id, digestToken(input.requestUri));
  if (!pushed || pushed.clientId !== input.clientId || pushed.expiresAt <= app.clock.now()) throw refused();
  // Only what was pushed counts; other parameters sent beside request_uri are not read.
  return {
    ...pushed.params,
    clientId: pushed.clientId,
    ...(input.userAgent !== undefined ? { userAgent: input.userAgent } : {}),
  };
}

/**
 * Whether this client must push its requests. The realm policy covers registered clients; the
 * built-in ones (identity-cli, the account page) stay exempt so that it cannot lock
 * administrators out (docs/decisions.md).
 */
async function pushRequired(reads: StartReads, clientId: string | undefined): Promise<boolean> {
  const client = clientId ? await reads.client(clientId) : null;
  if (!client) return false;
  if (client.require_pushed_authorization_requests) return true;
  const policy = await reads.policy();
  return (
    !client.builtin && policyValue(policy, 'interaction', 'require_pushed_authorization_requests') === true
  );
}

/** The parameters to validate for a request at the authorization endpoint or the headless start. */
export async function resolveAuthorizationRequest(
  app: SigninDeps,
  q: Queryable,
  realm: RealmRow,
  input: StartInput,
  reads: StartReads = new StartReads(q, realm.id),
): Promise<StartInput> {
  if (input.requestUri !== undefined)
    return fromPushedRequest(app, q, realm, { ...input, requestUri: input.requestUri });
  if (await pushRequired(reads, input.clientId))
    throw new AuthorizationRequestError(
      'invalid_request',
      'authorization requests of this client must be pushed first (pushed authorization request endpoint)',
    );
  if (input.request !== undefined)
    return withRequestObject(app, q, realm, { ...input, request: input.request }, reads);
  return input;
}

/**
 * resolveAuthorizationRequest for the authorization endpoint and the headless start: a refusal is
 * a 400 problem with code invalid_request and the OAuth error in `error` (spec doc 1, Errors).
 */
export async function resolveOrRefuse(
  app: SigninDeps,
  q: Queryable,
  realm: RealmRow,
  input: StartInput,
  reads: StartReads = new StartReads(q, realm.id),
): Promise<StartInput> {
  try {
    return await resolveAuthorizationRequest(app, q, realm, input, reads);
  } catch (e) {
    if (e instanceof AuthorizationRequestError)
      throw new Problem(400, 'invalid_request', e.message, { error: e.error });
    throw e;
  }
}
