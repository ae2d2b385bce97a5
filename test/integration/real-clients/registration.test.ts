// Dynamic client registration (RFC 7591) and its management (RFC 7592) as openid-client 6 and
// oauth4webapi 3 use them (docs/oauth-registration.md): discovery advertises the endpoint only when
// the policy turns registration on; a registration with an initial access token is live at once
// and completes a code flow (with consent: registered clients are third-party); one without a token
// is held until an administrator approves it, and gets nothing before; the registration access
// token rotates on every use; refusals leave nothing issued and nothing written.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { digestToken } from '../../../src/kernel/digest.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { deliverDueLogouts } from '../../../src/oauth/backchannel-logout.task.ts';
import { DatabaseUnavailable } from '../../../src/platform/db/pg-errors.ts';
import { APPLY } from '../../../src/restore/reconcile.repo.ts';
import type { LogRecord } from '../../../src/restore/revocation-log.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { audits, count, events, issuedSoFar, rows } from '../../harness/signin-kit.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
import { startReceiver } from '../webhooks/webhook-kit.ts';
import { PASSWORD, REDIRECT, type RpSetup, rpSetup, signInAt, startBodyOf } from './rp-kit.ts';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

interface Setup extends RpSetup {
  admin: ApiCallerKit;
}

async function setup(
  t: TestContext,
  policy: Record<string, unknown>,
  overrides?: Record<string, unknown>,
): Promise<Setup> {
  const s = await rpSetup(t, overrides ? { overrides } : {});
  if (Object.keys(policy).length > 0) await s.h.setPolicy(s.realm, { client_registration: policy });
  return { ...s, admin: await apiCaller(s.h, s.realm) };
}

async function initialAccessToken(s: Setup, body: Record<string, unknown> = {}) {
  const res = await s.admin.call('POST', '/initial-access-tokens', body);
  const answer = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 201, JSON.stringify(answer));
  return answer as { id: string; token: string; max_uses: number; uses: number };
}

const registered = (s: Setup) =>
  count(s.h, 'select 1 from client_registrations where realm_id = $1', [s.realm.id]);
const registeredClients = (s: Setup) =>
  count(s.h, `select 1 from clients where realm_id = $1 and client_id like 'dcr-%'`, [s.realm.id]);

/** Plays the person at the login page, consent included (registered clients always ask). */
const signInWithConsent = (s: Setup, authorizationUrl: URL) =>
  signInAt(s.h, s.realm, authorizationUrl, 'alice@example.com', PASSWORD, { consent: true });

test('discovery names the registration endpoint only while the policy enables registration', async (t) => {
  const s = await setup(t, {});
  const metadata = async () =>
    (await (await fetch(`${s.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  assert.equal((await metadata()).registration_endpoint, undefined);
  const res = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT] }),
  });
  assert.equal(res.status, 404);
  assert.equal(((await res.json()) as { code: string }).code, 'feature_disabled');
  await s.h.setPolicy(s.realm, { client_registration: { enabled: true } });
  assert.equal((await metadata()).registration_endpoint, `${s.issuer}/oauth/register`);
  assert.equal(await registered(s), 0);
});

test('openid-client: an initial access token registers a live client that completes a code flow', async (t) => {
  const s = await setup(t, { enabled: true });
  const iat = await initialAccessToken(s, { max_uses: 2, description: 'partner onboarding' });
  assert.match(iat.token, /^pa_iat_/);
  const stored = await rows(s.h, 'select token_digest from initial_access_tokens where id = $1', [iat.id]);
  assert.notEqual(stored[0]?.token_digest, iat.token, 'only a digest is stored');

  const config = await oidc.dynamicClientRegistration(
    new URL(s.issuer),
    { redirect_uris: [REDIRECT], client_name: 'Partner App', scope: 'openid profile' },
    undefined,
    { initialAccessToken: iat.token, execute: [oidc.allowInsecureRequests] },
  );
  const meta = config.clientMetadata();
  assert.match(meta.client_id, /^dcr-/);
  assert.equal(meta.approval_status, 'approved');
  assert.equal(meta.token_endpoint_auth_method, 'client_secret_basic');
  assert.equal(typeof meta.client_secret, 'string');
  assert.equal(typeof meta.registration_access_token, 'string');

  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const callback = await signInWithConsent(s, url);
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });
  assert.equal(tokens.claims()?.aud, meta.client_id);
  const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub ?? '');
  assert.equal(info.name, 'Alice Example', 'the registered profile scope reaches UserInfo');
  assert.equal(info.email, undefined, 'email was not registered, so UserInfo does not release it');

  const [client] = await rows(
    s.h,
    'select consent_mode, state, oidc_scopes from clients where client_id = $1',
    [meta.client_id],
  );
  assert.deepEqual(client, { consent_mode: 'required', state: 'active', oidc_scopes: ['openid', 'profile'] });
  const tokensRow = await rows(s.h, 'select uses from initial_access_tokens where id = $1', [iat.id]);
  assert.equal(tokensRow[0]?.uses, 1, 'the use is counted');
  const [audit] = await audits(s.h, s.realm, 'client.registered');
  assert.equal(audit?.actor_type, 'client');
  assert.equal((audit?.data as Record<string, unknown> | undefined)?.initial_access_token_id, iat.id);
  const log = await rows(
    s.h,
    `select record from revocation_log where realm_id = $1 and kind = 'initial_access_token'`,
    [s.realm.id],
  );
  assert.equal(
    (log[0]?.record as Record<string, unknown> | undefined)?.uses,
    1,
    'the count is in the revocation log',
  );
});

test('oauth4webapi: a registration without a token is held, gets nothing, and works once approved', async (t) => {
  const s = await setup(t, { enabled: true, open: true });
  const issuer = new URL(s.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  assert.equal(as.registration_endpoint, `${s.issuer}/oauth/register`);
  const answer = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: [REDIRECT], client_name: 'Open App', scope: 'openid email' },
      insecure,
    ),
  );
  assert.equal(answer.approval_status, 'pending');
  const clientId = answer.client_id;
  const secret = String(answer.client_secret);
  const before = await issuedSoFar(s.h, s.realm);
  const client: oauth.Client = { client_id: clientId };
  const auth = oauth.ClientSecretBasic(secret);

  // Held: the token endpoint does not know it, and no sign-in starts for it.
  const held = await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams(), insecure);
  assert.equal(held.status, 401);
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint ?? '');
  for (const [k, v] of Object.entries({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid email',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st-1',
  }))
    url.searchParams.set(k, v);
  const start = await json(
    await s.h.get(`/api/v1/realms/${s.realm.name}/auth/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(startBodyOf(url)),
    }),
  );
  assert.ok(start.status >= 400, `a held client starts no sign-in: ${JSON.stringify(start.body)}`);
  assert.deepEqual(await issuedSoFar(s.h, s.realm), before, 'nothing issued to a held client');

  // The administrator's queue; enabling it by the client route is refused.
  const queue = (await (await s.admin.call('GET', '/client-registrations?status=pending')).json()) as {
    items: { client_id: string; status: string }[];
  };
  assert.deepEqual(
    queue.items.map((i) => [i.client_id, i.status]),
    [[clientId, 'pending']],
  );
  const enable = await s.admin.call('POST', `/clients/${clientId}/enable`);
  assert.equal(enable.status, 409);
  const approved = await s.admin.call('POST', `/client-registrations/${clientId}/approve`);
  assert.equal(approved.status, 200, await approved.clone().text());
  const [changed] = await events(s.h, s.realm, 'client.state_changed');
  assert.deepEqual(changed?.data, { client_ref: clientId, state: 'active' });

  // Approved: the code flow completes with the library's own checks.
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  const callback = await signInWithConsent(s, url);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    auth,
    params,
    REDIRECT,
    verifier,
    insecure,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, {
    expectedNonce: nonce,
    requireIdToken: true,
  });
  assert.equal(oauth.getValidatedIdTokenClaims(tokens)?.aud, clientId);
});

test('require_approval holds token registrations too; rejection ends the client for good', async (t) => {
  const s = await setup(t, { enabled: true, require_approval: true });
  const iat = await initialAccessToken(s);
  const before = await issuedSoFar(s.h, s.realm);
  const res = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      application_type: 'web',
    }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 201, JSON.stringify(body));
  assert.equal(body.approval_status, 'pending');
  assert.equal(body.client_secret, undefined, 'a public client has no secret');
  const clientId = String(body.client_id);
  const [spa] = await rows(s.h, 'select type, allowed_origins from clients where client_id = $1', [clientId]);
  assert.deepEqual(
    spa,
    { type: 'spa', allowed_origins: [new URL(REDIRECT).origin] },
    'origins of its redirect URIs',
  );
  const rejected = await s.admin.call('POST', `/client-registrations/${clientId}/reject`);
  assert.equal(rejected.status, 200);
  const again = await s.admin.call('POST', `/client-registrations/${clientId}/approve`);
  assert.equal(again.status, 409);
  assert.equal((await s.admin.call('POST', `/clients/${clientId}/enable`)).status, 409);
  // The registration access token ended with the rejection.
  const read = await fetch(String(body.registration_client_uri), {
    headers: { authorization: `Bearer ${String(body.registration_access_token)}` },
  });
  assert.equal(read.status, 401);
  const [ev] = await events(s.h, s.realm, 'client.state_changed');
  assert.deepEqual(ev?.data, { client_ref: clientId, state: 'decommissioned' });
  assert.deepEqual(await issuedSoFar(s.h, s.realm), before, 'nothing issued');
});

test('RFC 7592: the registration access token rotates on every use; PUT, GET and DELETE', async (t) => {
  const s = await setup(t, { enabled: true });
  const iat = await initialAccessToken(s);
  const created = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
    body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'Managed', unknown_member: 'ignored' }),
  });
  const first = (await created.json()) as Record<string, string>;
  assert.equal(created.status, 201, JSON.stringify(first));
  assert.equal(first.unknown_member, undefined, 'unknown metadata is ignored, not echoed');
  const uri = first.registration_client_uri ?? '';
  const call = (token: string, method = 'GET', body?: unknown) =>
    fetch(uri, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const read = await call(first.registration_access_token ?? '');
  const second = (await read.json()) as Record<string, string>;
  assert.equal(read.status, 200);
  assert.equal(second.client_secret, undefined, 'the secret is never shown again');
  assert.notEqual(second.registration_access_token, first.registration_access_token);
  assert.equal((await call(first.registration_access_token ?? '')).status, 401, 'the used token is spent');

  const other = 'https://app.example.com/other-callback';
  const put = await call(second.registration_access_token ?? '', 'PUT', {
    client_id: first.client_id,
    redirect_uris: [REDIRECT, other],
    client_name: 'Managed 2',
  });
  const third = (await put.json()) as Record<string, unknown>;
  assert.equal(put.status, 200, JSON.stringify(third));
  assert.deepEqual(third.redirect_uris, [REDIRECT, other]);
  assert.equal(third.approval_status, 'approved', 'a token registration stays approved');

  const badPut = await call(String(third.registration_access_token), 'PUT', {
    client_id: first.client_id,
    redirect_uris: ['http://evil.example.com/cb'],
  });
  const bad = (await badPut.json()) as Record<string, unknown>;
  assert.equal(badPut.status, 400);
  assert.equal(bad.error, 'invalid_redirect_uri');
  const [row] = await rows(s.h, 'select redirect_uris from clients where client_id = $1', [first.client_id]);
  assert.deepEqual(row?.redirect_uris, [REDIRECT, other], 'a refused PUT changes nothing');

  const del = await call(String(third.registration_access_token), 'DELETE');
  assert.equal(del.status, 204);
  const [ended] = await rows(
    s.h,
    `select c.state, r.status, r.registration_token_digest from clients c
       join client_registrations r on r.realm_id = c.realm_id and r.client_row_id = c.id where c.client_id = $1`,
    [first.client_id],
  );
  assert.deepEqual(ended, { state: 'disabled', status: 'deleted', registration_token_digest: null });
  const rotations = await count(
    s.h,
    `select 1 from revocation_log where realm_id = $1 and kind = 'registration_token_rotated'`,
    [s.realm.id],
  );
  assert.equal(rotations, 3, 'GET, PUT and DELETE each logged their rotation');
});

test('refusals: no token, spent or revoked tokens, bad metadata and the hourly budget write nothing', async (t) => {
  const s = await setup(t, { enabled: true });
  let attempts = 0;
  const register = (body: unknown, token?: string) => {
    attempts++;
    return fetch(`${s.issuer}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  };
  const good = { redirect_uris: [REDIRECT] };

  const anonymous = await register(good);
  assert.equal(anonymous.status, 401, 'without open, a token is required');
  assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer /);
  assert.equal((await register(good, 'pa_iat_guessed')).status, 401);

  const iat = await initialAccessToken(s, { max_uses: 1 });
  const cases: [string, unknown, string][] = [
    ['no redirect URI', { redirect_uris: [] }, 'invalid_redirect_uri'],
    [
      '21 redirect URIs',
      { redirect_uris: Array.from({ length: 21 }, (_, i) => `${REDIRECT}/${i}`) },
      'invalid_redirect_uri',
    ],
    ['a fragment', { redirect_uris: [`${REDIRECT}#x`] }, 'invalid_redirect_uri'],
    ['a scope outside open_scopes', { ...good, scope: 'openid phone' }, 'invalid_client_metadata'],
    ['client_credentials', { ...good, grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    ['implicit', { ...good, response_types: ['token'] }, 'invalid_client_metadata'],
    ['a jwks_uri', { ...good, jwks_uri: 'https://app.example.com/jwks' }, 'invalid_client_metadata'],
  ];
  for (const [name, body, error] of cases) {
    const res = await register(body, iat.token);
    const answer = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 400, `${name}: ${JSON.stringify(answer)}`);
    assert.equal(res.headers.get('content-type')?.split(';')[0], 'application/json', name);
    assert.equal(answer.error, error, name);
    assert.equal(answer.code, 'validation_failed', name);
  }
  assert.equal(await registered(s), 0, 'refused registrations wrote nothing');
  assert.equal(
    (await rows(s.h, 'select uses from initial_access_tokens where id = $1', [iat.id]))[0]?.uses,
    0,
  );

  assert.equal((await register(good, iat.token)).status, 201);
  const spent = await register(good, iat.token);
  assert.equal(spent.status, 401, 'a token used up registers nothing more');

  const revoked = await initialAccessToken(s, { max_uses: 5 });
  assert.equal((await s.admin.call('DELETE', `/initial-access-tokens/${revoked.id}`)).status, 204);
  assert.equal((await register(good, revoked.token)).status, 401);
  const listed = (await (await s.admin.call('GET', '/initial-access-tokens')).json()) as {
    items: { id: string; state: string; token?: string }[];
  };
  assert.deepEqual(
    listed.items.map((i) => [i.id, i.state, i.token]),
    [
      [revoked.id, 'revoked', undefined],
      [iat.id, 'used_up', undefined],
    ],
  );
  const tooMany = await s.admin.call('POST', '/initial-access-tokens', { max_uses: 1001 });
  assert.equal(tooMany.status, 422);
  assert.equal(await registeredClients(s), 1);

  // 20 attempts an hour per network, counted whatever their outcome (document 2, Limits).
  const fresh = await initialAccessToken(s, { max_uses: 50 });
  let limited: Response | null = null;
  while (attempts < 30 && limited === null) {
    const res = await register(good, fresh.token);
    if (res.status === 429) limited = res;
    else await res.body?.cancel();
  }
  assert.equal(attempts, 21, 'the 21st attempt of the hour is refused');
  const answer = (await limited?.json()) as Record<string, unknown>;
  assert.equal(answer.code, 'rate_limited');
  assert.equal(answer.error, 'rate_limited');
  assert.ok(Number(limited?.headers.get('retry-after')) > 0);
  const countedUses = await rows(s.h, 'select uses from initial_access_tokens where id = $1', [fresh.id]);
  assert.equal(countedUses[0]?.uses, 21 - 12 - 1, 'the refused attempt spent no use of the token');
});

test('an open registration that changes its redirect URIs after approval waits for approval again', async (t) => {
  const s = await setup(t, { enabled: true, open: true });
  const created = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'Open' }),
  });
  const first = (await created.json()) as Record<string, string>;
  assert.equal(created.status, 201);
  const clientId = first.client_id ?? '';
  const basic = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Basic YTpi' },
    body: JSON.stringify({ redirect_uris: [REDIRECT] }),
  });
  assert.equal(basic.status, 401, 'a credential that is not a bearer token is a wrong one, not none');
  assert.equal(await registered(s), 1);
  assert.equal((await s.admin.call('POST', `/client-registrations/${clientId}/approve`)).status, 200);
  const put = async (token: string, body: Record<string, unknown>) => {
    const res = await fetch(first.registration_client_uri ?? '', {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: clientId, ...body }),
    });
    return (await res.json()) as Record<string, string>;
  };
  const renamed = await put(first.registration_access_token ?? '', {
    redirect_uris: [REDIRECT],
    client_name: 'Open 2',
  });
  assert.equal(renamed.approval_status, 'approved', 'a new name needs no review');
  const moved = await put(renamed.registration_access_token ?? '', {
    redirect_uris: ['https://elsewhere.example.com/cb'],
  });
  assert.equal(moved.approval_status, 'pending', 'a new redirect URI does');
  const [row] = await rows(s.h, 'select state from clients where client_id = $1', [clientId]);
  assert.equal(row?.state, 'disabled');
  const states = (await events(s.h, s.realm, 'client.state_changed')).map(
    (e) => (e.data as { state: string }).state,
  );
  assert.deepEqual(states, ['active', 'suspended']);

  // Where logout tokens about its users go is reviewed like a redirect URI.
  assert.equal((await s.admin.call('POST', `/client-registrations/${clientId}/approve`)).status, 200);
  const bcl = await put(moved.registration_access_token ?? '', {
    redirect_uris: ['https://elsewhere.example.com/cb'],
    backchannel_logout_uri: 'https://elsewhere.example.com/bcl',
  });
  assert.equal(bcl.approval_status, 'pending', 'a new back-channel logout URI needs review');
  assert.equal(bcl.backchannel_logout_uri, 'https://elsewhere.example.com/bcl');
});

test('openid-client: a registered back-channel logout URI receives a logout token at sign-out', async (t) => {
  const receiver = await startReceiver(t);
  const s = await setup(t, { enabled: true }, { 'delivery.egress_allowlist': '127.0.0.1/32' });
  const iat = await initialAccessToken(s);
  const bclUri = `http://127.0.0.1:${receiver.port}/bcl`;
  const refused = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
    body: JSON.stringify({ redirect_uris: [REDIRECT], backchannel_logout_uri: `${bclUri}#frag` }),
  });
  const refusal = (await refused.json()) as { error: string; errors: { field: string }[] };
  assert.equal(refused.status, 400);
  assert.equal(refusal.error, 'invalid_client_metadata');
  assert.deepEqual(
    refusal.errors.map((e) => e.field),
    ['backchannel_logout_uri'],
    "the administrator's rule refuses it",
  );
  assert.equal(await registered(s), 0);

  const config = await oidc.dynamicClientRegistration(
    new URL(s.issuer),
    {
      redirect_uris: [REDIRECT],
      scope: 'openid',
      backchannel_logout_uri: bclUri,
      backchannel_logout_session_required: true,
    },
    undefined,
    { initialAccessToken: iat.token, execute: [oidc.allowInsecureRequests] },
  );
  const meta = config.clientMetadata();
  assert.equal(meta.backchannel_logout_uri, bclUri);
  assert.equal(meta.backchannel_logout_session_required, true);
  const read = await fetch(String(meta.registration_client_uri), {
    headers: { authorization: `Bearer ${String(meta.registration_access_token)}` },
  });
  const shown = (await read.json()) as Record<string, unknown>;
  assert.equal(read.status, 200);
  assert.equal(shown.backchannel_logout_uri, bclUri, 'RFC 7592 GET shows it');
  assert.equal(shown.backchannel_logout_session_required, true);

  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
  });
  const tokens = await oidc.authorizationCodeGrant(config, await signInWithConsent(s, url), {
    pkceCodeVerifier: verifier,
    expectedNonce: nonce,
  });
  const sid = tokens.claims()?.sid;
  assert.equal(typeof sid, 'string');
  const out = await fetch(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token ?? '' }), {
    redirect: 'manual',
  });
  assert.ok(out.status < 500, `sign-out answered ${out.status}`);
  assert.ok(
    (await rows(s.h, 'select revoked_at from sessions where id = $1', [sid]))[0]?.revoked_at,
    'the sign-out ended the session',
  );

  assert.deepEqual(await deliverDueLogouts(workerDeps(s.h.ctx), 'test-worker', s.h.ctx.clock.now()), {
    delivered: 1,
  });
  assert.equal(receiver.received.length, 1);
  const token = new URLSearchParams(receiver.received[0]?.body ?? '').get('logout_token') ?? '';
  const { payload } = await jwtVerify(token, s.jwks, {
    issuer: s.issuer,
    audience: meta.client_id,
    typ: 'logout+jwt',
    requiredClaims: ['iat', 'exp', 'jti', 'events'],
  });
  assert.equal(payload.sid, sid);
  assert.equal(payload.sub, s.user.id);
  assert.equal('nonce' in payload, false);
});

test('restore re-applies initial access token counts and registration token rotations', async (t) => {
  const s = await setup(t, { enabled: true });
  const iat = await initialAccessToken(s, { max_uses: 3 });
  const created = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
    body: JSON.stringify({ redirect_uris: [REDIRECT] }),
  });
  const first = (await created.json()) as Record<string, string>;
  const read = await fetch(first.registration_client_uri ?? '', {
    headers: { authorization: `Bearer ${first.registration_access_token}` },
  });
  const second = (await read.json()) as Record<string, string>;
  assert.equal(read.status, 200);
  await s.admin.call('DELETE', `/initial-access-tokens/${iat.id}`);
  const log = (await rows(
    s.h,
    `select seq, kind, realm_id, created_at::text as logged_at, record from revocation_log
      where realm_id = $1 and kind in ('initial_access_token', 'registration_token_rotated') order by seq`,
    [s.realm.id],
  )) as unknown as LogRecord[];
  // A backup from before: the token unused and unrevoked, the first registration token in place.
  await s.h.ctx.db.query('update initial_access_tokens set uses = 0, revoked_at = null where id = $1', [
    iat.id,
  ]);
  await s.h.ctx.db.query(
    `update client_registrations set registration_token_digest = $2, token_rotated_at = '2020-01-01'
      where realm_id = $1`,
    [s.realm.id, digestToken(first.registration_access_token ?? '')],
  );
  await s.h.ctx.db.tx(async (tx) => {
    for (const l of log) await APPLY[l.kind](tx, l, new Date());
  });
  const [token] = await rows(s.h, 'select uses, revoked_at from initial_access_tokens where id = $1', [
    iat.id,
  ]);
  assert.equal(token?.uses, 1);
  assert.ok(token?.revoked_at, 'the revocation is re-applied');
  const [reg] = await rows(
    s.h,
    'select registration_token_digest from client_registrations where realm_id = $1',
    [s.realm.id],
  );
  assert.equal(reg?.registration_token_digest, digestToken(second.registration_access_token ?? ''));
});

test("a database outage answers 503 in the endpoint's own form, writes nothing, and the next request works", async (t) => {
  const s = await setup(t, { enabled: true });
  const iat = await initialAccessToken(s, { max_uses: 2 });
  const db = s.h.ctx.db;
  const tx = db.tx.bind(db);
  // The registration's transaction cannot reach the database, as when its connection is lost.
  db.tx = () => Promise.reject(new DatabaseUnavailable('connection', new Error('connection reset')));
  let res: Response;
  try {
    res = await fetch(`${s.issuer}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
  } finally {
    db.tx = tx;
  }
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error, 'temporarily_unavailable');
  assert.ok(Number(res.headers.get('retry-after')) > 0);
  assert.equal(await registered(s), 0);
  const again = await fetch(`${s.issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
    body: JSON.stringify({ redirect_uris: [REDIRECT] }),
  });
  assert.equal(again.status, 201);
});

test('concurrent registrations never spend more uses than the token has', {
  skip: RACE_NEEDS_POSTGRES,
}, async (t) => {
  const s = await setup(t, { enabled: true });
  const iat = await initialAccessToken(s, { max_uses: 3 });
  const answers = await Promise.all(
    Array.from({ length: 8 }, () =>
      fetch(`${s.issuer}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      }),
    ),
  );
  assert.deepEqual(
    answers.sort((a, b) => a - b),
    [201, 201, 201, 401, 401, 401, 401, 401],
  );
  assert.equal(await registeredClients(s), 3);
  const [row] = await rows(s.h, 'select uses from initial_access_tokens where id = $1', [iat.id]);
  assert.equal(row?.uses, 3);
});
