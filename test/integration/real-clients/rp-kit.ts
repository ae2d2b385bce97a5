// Shared setup of the relying-party suites (openid-client.test.ts, oauth4webapi.test.ts): a
// harness whose public origin is its own listener, so the discovered issuer and every endpoint
// it names are reachable; the headless sign-in standing in for the login page; and the realm
// JWKS for checks the libraries leave to the application.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { TestContext } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader } from 'jose';
import * as oauth from 'oauth4webapi';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import type { UserRow } from '../../../src/users/users.repo.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { json } from '../../harness/signin-driver.ts';
import { PASSWORD, REDIRECT } from '../../harness/signin-kit.ts';
import { clientSecret } from '../../harness/token-kit.ts';

export { PASSWORD, REDIRECT };
export const POST_LOGOUT = 'https://app.example.com/signed-out';
export const ORDERS = 'https://orders.example.com';
export const INVENTORY = 'https://inventory.example.com';
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

export interface RpSetup {
  h: Harness;
  realm: RealmRow;
  /** The confidential web client 'web-app' (client_secret_basic, REDIRECT, POST_LOGOUT). */
  client: ClientRow;
  secret: string;
  user: UserRow;
  /** `{public_origin}/realms/{realm}`, with public_origin the listener's URL. */
  issuer: string;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

/** A harness whose issuer is reachable, a fresh realm, the web client and alice@example.com. */
export async function rpSetup(
  t: TestContext,
  opts: { overrides?: Record<string, unknown> } = {},
): Promise<RpSetup> {
  const h = await startHarness(t, {
    publicOriginIsListener: true,
    ...(opts.overrides ? { overrides: opts.overrides } : {}),
  });
  assert.equal(h.ctx.config.server.publicOrigin, h.publicUrl);
  const realm = await h.createRealm();
  const client = await h.createClient(realm, {
    clientId: 'web-app',
    name: 'Web App',
    type: 'web',
    redirectUris: [REDIRECT],
    postLogoutRedirectUris: [POST_LOGOUT],
    tokenEndpointAuthMethod: 'client_secret_basic',
  });
  const user = await h.createUser(realm, {
    email: 'alice@example.com',
    password: PASSWORD,
    displayName: 'Alice Example',
  });
  const secret = await clientSecret(h, realm, client);
  const issuer = `${h.publicUrl}/realms/${realm.name}`;
  return { h, realm, client, secret, user, issuer, jwks: createRemoteJWKSet(new URL(`${issuer}/jwks`)) };
}

// The parameters of an authorization request that the headless start takes, under the same names.
const SINGLE = [
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
  'login_hint',
  'acr_values',
  'response_mode',
  'request_uri',
] as const;

/**
 * The headless transaction body for an authorization URL a library built: response_type must be
 * code (the start has no such member: it only makes codes); any parameter the start does not know
 * fails the test rather than being dropped.
 */
export function startBodyOf(authorizationUrl: URL): Record<string, unknown> {
  const p = authorizationUrl.searchParams;
  // A pushed request (RFC 9126) is named by client_id and request_uri alone.
  if (!p.has('request_uri')) assert.equal(p.get('response_type'), 'code');
  const known = new Set<string>([...SINGLE, 'response_type', 'resource', 'max_age']);
  for (const k of p.keys())
    assert.ok(known.has(k), `authorization parameter ${k} has no headless equivalent`);
  const body: Record<string, unknown> = {};
  for (const k of SINGLE) {
    const v = p.get(k);
    if (v !== null) body[k] = v;
  }
  const resources = p.getAll('resource');
  if (resources.length > 0) body.resource = resources;
  const maxAge = p.get('max_age');
  if (maxAge !== null) body.max_age = Number(maxAge);
  return body;
}

/**
 * Stands in for the user agent at the login page: starts a headless transaction with the
 * parameters of `authorizationUrl`, identifies and gives the password (and, with `consent`,
 * consents to the requested scopes, the one step left for a client that asks), and returns the URL
 * the completed transaction redirects to (the callback the library then validates). `h` may stand
 * for another process serving the same public origin: its `get` reaches that process.
 */
export async function signInAt(
  h: Pick<Harness, 'publicUrl' | 'get'>,
  realm: RealmRow,
  authorizationUrl: URL,
  email = 'alice@example.com',
  password = PASSWORD,
  opts: { consent?: boolean } = {},
): Promise<URL> {
  assert.equal(
    `${authorizationUrl.origin}${authorizationUrl.pathname}`,
    `${h.publicUrl}/realms/${realm.name}/oauth/authorize`,
    'the library sends the user agent to the discovered authorization endpoint',
  );
  const base = `/api/v1/realms/${realm.name}/auth/transactions`;
  const start = await json(
    await h.get(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(startBodyOf(authorizationUrl)),
    }),
  );
  assert.equal(start.status, 201, JSON.stringify(start.body));
  const step = async (path: string, body: unknown) =>
    json(
      await h.get(`${base}/${start.body.transaction_id}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-transaction-token': start.body.continuation_token },
        body: JSON.stringify(body),
      }),
    );
  const identified = await step('identify', { identifier: email });
  assert.equal(identified.status, 200, JSON.stringify(identified.body));
  let done = await step('password', { password });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  if (opts.consent) {
    const actions = (done.body.next_actions as { type: string }[]).map((a) => a.type);
    assert.deepEqual(actions, ['consent'], 'the client asks for consent');
    const scopes = (authorizationUrl.searchParams.get('scope') ?? '').split(' ');
    done = await step('consent', { approve: true, scopes });
  }
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  return new URL(done.body.redirect_to);
}

/**
 * The authorization half of a PKCE code flow of the web client through oauth4webapi: the request
 * to the discovered authorization endpoint, the sign-in at `at` (the harness, or another process
 * serving the same public origin) and the callback the library validated.
 */
export async function webSignIn(
  s: RpSetup,
  as: oauth.AuthorizationServer,
  scope: string,
  at: Pick<Harness, 'publicUrl' | 'get'> = s.h,
) {
  const client: oauth.Client = { client_id: 'web-app' };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint ?? '');
  for (const [k, v] of Object.entries({
    client_id: 'web-app',
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  }))
    url.searchParams.set(k, v);
  const callback = oauth.validateAuthResponse(as, client, await signInAt(at, s.realm, url), state);
  return { client, callback, verifier };
}

/** OIDC Core 3.1.3.6: the left half of the hash of the access token, base64url (SHA-256 algs). */
export function expectedAtHash(idToken: string, accessToken: string): string {
  const { alg } = decodeProtectedHeader(idToken);
  assert.ok(alg === 'RS256' || alg === 'PS256' || alg === 'ES256', `at_hash for ${alg} not computed here`);
  const digest = createHash('sha256').update(accessToken).digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** Seeds rows straight into the realm (the administration API has its own tests). */
export async function addIntrospector(h: Harness, realm: RealmRow, resourceId: string, client: ClientRow) {
  await h.ctx.db.query(
    `insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at)
     values ($1, $2, $3, now())`,
    [realm.id, resourceId, client.id],
  );
}
