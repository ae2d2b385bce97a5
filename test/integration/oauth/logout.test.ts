// GET and POST /realms/{realm}/oauth/logout (OpenID Connect RP-Initiated Logout 1.0): the browser
// session and the hint's session end with their refresh families; the answer is a redirect to a
// registered post-logout URI or JSON; bad requests are 400 problems that change nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { issuerOf } from '../../../src/kernel/audiences.ts';
import { signIdToken } from '../../../src/oauth/tokens/id-token.ts';
import type { Harness } from '../../harness/harness.ts';
import { json } from '../../harness/signin-driver.ts';
import {
  audits,
  count,
  events,
  type MovableClock,
  movableClock,
  PASSWORD,
  parseSetCookies,
  REDIRECT,
  redirectParams,
  rows,
  signinSetup,
  startBrowser,
} from '../../harness/signin-kit.ts';
import { clientSecret, codeFlow, oauthPost } from '../../harness/token-kit.ts';

const LOGIN_UI = 'https://login.example.com/signin';
const UI_ORIGIN = 'https://login.example.com';
const AFTER = 'https://app.example.com/logged-out';
const AFTER_WITH_QUERY = 'https://app.example.com/bye?from=idp';

async function setup(t: Parameters<typeof signinSetup>[0], clock?: MovableClock) {
  const s = await signinSetup(t, {
    loginUi: LOGIN_UI,
    ...(clock ? { clock } : {}),
    client: { allowedOrigins: [UI_ORIGIN], postLogoutRedirectUris: [AFTER, AFTER_WITH_QUERY] },
  });
  const { h, realm, client } = s;
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  /** A browser sign-in: the pa_sid cookie and the tokens of its code. */
  const browserSignIn = async () => {
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const sid = parseSetCookies(done.headers).find((c) => c.name === 'pa_sid');
    assert.ok(sid);
    const code = redirectParams(done.body.redirect_to).get('code') as string;
    const tokens = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: tx.verifier },
      creds,
    );
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    return {
      cookie: sid.value,
      tokens: tokens.body,
      sessionId: decodeJwt(tokens.body.id_token).sid as string,
    };
  };
  const logout = (params: Record<string, string>, cookie?: string, method: 'GET' | 'POST' = 'GET') => {
    const qs = new URLSearchParams(params).toString();
    const headers: Record<string, string> = cookie ? { cookie: `pa_sid=${cookie}` } : {};
    if (method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
    return h.get(`/realms/${realm.name}/oauth/logout${method === 'GET' && qs ? `?${qs}` : ''}`, {
      method,
      headers,
      redirect: 'manual',
      ...(method === 'POST' ? { body: qs } : {}),
    });
  };
  const refresh = (token: string) =>
    oauthPost(h, realm, 'token', { grant_type: 'refresh_token', refresh_token: token }, creds);
  return { ...s, creds, browserSignIn, logout, refresh };
}

const sessionRow = async (h: Harness, id: string) =>
  (await rows(h, 'select revoked_at, revoked_reason from sessions where id = $1', [id]))[0];

test('a hinted logout ends the session, its refresh family and cookie, then returns to the registered URI with state', async (t) => {
  const { h, realm, user, browserSignIn, logout, refresh } = await setup(t);
  const s = await browserSignIn();
  const outbox = () => count(h, 'select 1 from outbox where realm_id = $1', [realm.id]);
  const eventsBefore = await outbox();
  const res = await logout(
    { id_token_hint: s.tokens.id_token, post_logout_redirect_uri: AFTER, state: 'st/1 2', ui_locales: 'de' },
    s.cookie,
  );
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), `${AFTER}?state=st%2F1+2`);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const cleared = parseSetCookies(res.headers).find((c) => c.name === 'pa_sid');
  assert.ok(cleared, 'pa_sid is cleared');
  assert.equal(cleared.value, '');
  assert.equal(cleared.attributes.path, `/realms/${realm.name}/`);
  assert.equal(cleared.attributes.httponly, true);
  assert.equal(cleared.attributes.samesite, 'Lax');
  assert.ok(cleared.attributes.expires || cleared.attributes['max-age'] === '0');

  const row = await sessionRow(h, s.sessionId);
  assert.ok(row?.revoked_at);
  assert.equal(row?.revoked_reason, 'logout');
  assert.equal((await refresh(s.tokens.refresh_token)).body.error, 'invalid_grant');
  const ui = await h.get(`/realms/${realm.name}/oauth/userinfo`, {
    headers: { authorization: `Bearer ${s.tokens.access_token}` },
  });
  assert.equal(ui.status, 401, 'tokens of the session are inactive');
  // document 2, Events: a logout emits no event of its own; the audit trail records it.
  assert.deepEqual(await events(h, realm, 'session.revoked'), []);
  assert.equal(await outbox(), eventsBefore, 'no event at all');
  const au = await audits(h, realm, 'user.logged_out');
  assert.equal(au.length, 1);
  assert.equal(au[0]?.subject_id, user.id);
  assert.equal(au[0]?.target_id, s.sessionId);
});

test('POST with form parameters works the same; without a redirect URI the answer is JSON', async (t) => {
  const { h, realm, browserSignIn, logout } = await setup(t);
  const s = await browserSignIn();
  const res = await logout({ id_token_hint: s.tokens.id_token }, s.cookie, 'POST');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { logged_out: true });
  assert.ok((await sessionRow(h, s.sessionId))?.revoked_at);
  const json415 = await h.get(`/realms/${realm.name}/oauth/logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(json415.status, 415);
});

test('the browser cookie alone ends its session; the hint alone ends the hinted session', async (t) => {
  const { h, browserSignIn, logout } = await setup(t);
  const a = await browserSignIn();
  const byCookie = await logout({}, a.cookie);
  assert.equal(byCookie.status, 200);
  assert.deepEqual(await byCookie.json(), { logged_out: true });
  assert.ok((await sessionRow(h, a.sessionId))?.revoked_at);

  const b = await browserSignIn();
  const byHint = await logout({ id_token_hint: b.tokens.id_token });
  assert.equal(byHint.status, 200);
  assert.equal(parseSetCookies(byHint.headers).length, 0, 'no cookie to clear');
  assert.ok((await sessionRow(h, b.sessionId))?.revoked_at);
});

test('client_id without a hint may name a registered URI; its own query is kept', async (t) => {
  const { browserSignIn, logout } = await setup(t);
  const s = await browserSignIn();
  const res = await logout(
    { client_id: 'web-app', post_logout_redirect_uri: AFTER_WITH_QUERY, state: 'x' },
    s.cookie,
  );
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), `${AFTER_WITH_QUERY}&state=x`);
  const noState = await logout({ client_id: 'web-app', post_logout_redirect_uri: AFTER });
  assert.equal(noState.headers.get('location'), AFTER);
});

test('an unregistered URI, a hint for another client or a bad hint is a 400 problem that changes nothing', async (t) => {
  const { h, realm, browserSignIn, logout } = await setup(t);
  await h.createClient(realm, {
    clientId: 'other-app',
    name: 'Other',
    type: 'web',
    redirectUris: ['https://other.example.com/cb'],
    postLogoutRedirectUris: ['https://other.example.com/bye'],
  });
  const s = await browserSignIn();
  const [header, payload, signature] = (s.tokens.id_token as string).split('.');
  const tampered = `${header}.${Buffer.from(JSON.stringify({ ...decodeJwt(s.tokens.id_token), sub: 'usr_other' })).toString('base64url')}.${signature}`;
  const refused: [string, Record<string, string>][] = [
    [
      'unregistered URI',
      { id_token_hint: s.tokens.id_token, post_logout_redirect_uri: 'https://evil.example.com/' },
    ],
    ['URI prefix only', { client_id: 'web-app', post_logout_redirect_uri: `${AFTER}/more` }],
    [
      'URI of another client',
      { client_id: 'web-app', post_logout_redirect_uri: 'https://other.example.com/bye' },
    ],
    ['URI without a client', { post_logout_redirect_uri: AFTER }],
    ['hint for another client', { id_token_hint: s.tokens.id_token, client_id: 'other-app' }],
    ['tampered hint', { id_token_hint: tampered }],
    ['unsigned hint', { id_token_hint: `${header}.${payload}.` }],
    ['access token as hint', { id_token_hint: s.tokens.access_token }],
    ['garbage hint', { id_token_hint: 'not-a-jwt' }],
    ['unknown client', { client_id: 'nobody', post_logout_redirect_uri: AFTER }],
  ];
  for (const [why, params] of refused) {
    const res = await logout(params, s.cookie);
    assert.equal(res.status, 400, why);
    assert.equal(res.headers.get('location'), null, why);
    assert.equal(((await res.json()) as { code: string }).code, 'invalid_request', why);
    assert.equal(parseSetCookies(res.headers).length, 0, `${why}: cookie kept`);
  }
  const repeated = await h.get(
    `/realms/${realm.name}/oauth/logout?state=a&state=b&id_token_hint=${s.tokens.id_token}`,
    { redirect: 'manual', headers: { cookie: `pa_sid=${s.cookie}` } },
  );
  assert.equal(repeated.status, 400);
  assert.equal((await sessionRow(h, s.sessionId))?.revoked_at, null);
  assert.equal(
    await count(h, `select 1 from outbox where realm_id = $1 and event_type = 'session.revoked'`, [realm.id]),
    0,
  );
});

test('an expired hint is still a hint', async (t) => {
  const clock = movableClock();
  const { h, browserSignIn, logout } = await setup(t, clock);
  const s = await browserSignIn();
  clock.advance(20 * 60_000); // ID tokens live 5 minutes; the session idles 30
  const res = await logout({ id_token_hint: s.tokens.id_token, post_logout_redirect_uri: AFTER });
  assert.equal(res.status, 303);
  assert.ok((await sessionRow(h, s.sessionId))?.revoked_at);
});

test("a hint naming another user's session does not end it", async (t) => {
  const { h, realm, browserSignIn, logout } = await setup(t);
  const s = await browserSignIn();
  const signer = await h.ctx.keyStore.activeSigner(realm.id);
  assert.ok(signer);
  const foreign = await signIdToken(
    {
      issuer: issuerOf(h.ctx.config.server.publicOrigin, realm.name),
      subject: 'usr_someone_else',
      clientId: 'web-app',
      authTime: h.ctx.clock.now(),
      ttlMs: 300_000,
      sessionId: s.sessionId,
    },
    signer,
    h.ctx.clock.now(),
  );
  const res = await logout({ id_token_hint: foreign.token });
  assert.equal(res.status, 200);
  assert.equal((await sessionRow(h, s.sessionId))?.revoked_at, null);
});

test('a logout with nothing to end answers the same JSON; an unknown realm is 404', async (t) => {
  const { h, realm, logout } = await setup(t);
  const res = await logout({}, 'not-a-session-cookie');
  assert.equal(res.status, 200);
  assert.deepEqual(await json(res).then((r) => r.body), { logged_out: true });
  assert.equal((await events(h, realm, 'session.revoked')).length, 0);
  assert.equal((await h.get('/realms/nosuchrealm/oauth/logout')).status, 404);
});

test('a headless session (no cookie) ends through its ID token hint', async (t) => {
  const { h, realm, creds, logout, refresh } = await setup(t);
  const tokens = await codeFlow(h, realm, creds);
  const sid = decodeJwt(tokens.body.id_token).sid as string;
  const res = await logout({
    id_token_hint: tokens.body.id_token,
    post_logout_redirect_uri: AFTER,
    state: 's',
  });
  assert.equal(res.status, 303);
  assert.ok((await sessionRow(h, sid))?.revoked_at);
  assert.equal((await refresh(tokens.body.refresh_token)).body.error, 'invalid_grant');
});
