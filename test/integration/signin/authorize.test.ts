// GET /realms/{realm}/oauth/authorize: which errors are answered directly (nothing trustworthy to
// redirect to) and which go back to the validated redirect URI; none of them creates anything.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import {
  assertNothingIssued,
  authorize,
  authorizeQuery,
  count,
  parseSetCookies,
  REDIRECT,
  rows,
  signinSetup,
} from '../../harness/signin-kit.ts';
import { grantResources } from '../../harness/token-kit.ts';

const LOGIN_UI = 'https://login.example.com/signin';

async function setup(t: TestContext, withLoginUi = true) {
  const { h, realm, client } = await signinSetup(t, {
    loginUi: withLoginUi ? LOGIN_UI : undefined,
    user: null,
  });
  await grantResources(h, realm, client, ['https://api.example.com', 'https://other.example.com']);
  const transactions = () => count(h, 'select 1 from signin_transactions where realm_id = $1', [realm.id]);
  return { h, realm, transactions };
}

const query = (extra: Record<string, string> = {}, drop: string[] = []) => {
  const { params } = authorizeQuery('web-app', REDIRECT, extra);
  for (const name of drop) params.delete(name);
  return params;
};

type Setup = Awaited<ReturnType<typeof setup>>;

async function direct(s: Setup, name: string, params: URLSearchParams | string, status = 400) {
  const before = await s.transactions();
  const r = await authorize(s.h, s.realm.name, params);
  assert.equal(r.status, status, `${name}: ${r.status}`);
  assert.equal(r.headers.get('location'), null, `${name}: must not redirect`);
  assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/, name);
  assert.deepEqual(parseSetCookies(r.headers), [], `${name}: no cookie`);
  assert.equal(await s.transactions(), before, `${name}: a transaction was created`);
  return (await r.json()) as { code: string; error?: string };
}

async function redirected(s: Setup, name: string, params: URLSearchParams, error: string) {
  const before = await s.transactions();
  const r = await authorize(s.h, s.realm.name, params);
  assert.equal(r.status, 303, `${name}: ${r.status} ${await r.clone().text()}`);
  const location = new URL(r.headers.get('location') ?? '');
  assert.equal(`${location.origin}${location.pathname}`, REDIRECT, name);
  assert.equal(location.searchParams.get('error'), error, name);
  assert.equal(location.searchParams.get('state'), 'st-123', name);
  assert.equal(
    location.searchParams.get('iss'),
    `${s.h.ctx.config.server.publicOrigin}/realms/${s.realm.name}`,
  );
  assert.equal(location.searchParams.get('code'), null);
  assert.deepEqual(parseSetCookies(r.headers), [], `${name}: no cookie`);
  assert.equal(await s.transactions(), before, `${name}: a transaction was created`);
  return location;
}

describe('sign-in › authorize endpoint', () => {
  test('case=a valid request creates a browser transaction bound to the request/mode=browser', async (t) => {
    const s = await setup(t);
    const { params, verifier } = authorizeQuery('web-app', REDIRECT, {
      scope: 'openid profile',
      resource: 'https://api.example.com',
      ui_locales: 'de-CH',
      prompt: 'login',
    });
    params.append('resource', 'https://other.example.com');
    const r = await authorize(s.h, s.realm.name, params);
    assert.equal(r.status, 303);
    const id = new URL(r.headers.get('location') ?? '').searchParams.get('transaction_id');
    const [row] = await rows(s.h, 'select * from signin_transactions where realm_id = $1 and id = $2', [
      s.realm.id,
      id,
    ]);
    assert.ok(row);
    assert.equal(row.mode, 'browser');
    assert.equal(row.client_id, 'web-app');
    assert.equal(row.redirect_uri, REDIRECT);
    assert.deepEqual(row.scopes, ['openid', 'profile']);
    assert.deepEqual(row.resources, ['https://api.example.com', 'https://other.example.com']);
    assert.equal(row.state, 'st-123');
    assert.equal(row.nonce, 'n-456');
    assert.deepEqual(row.prompt, ['login']);
    assert.equal(row.ui_locales, 'de-CH');
    assert.equal(row.response_mode, 'query');
    const { s256Challenge } = await import('../../../src/kernel/pkce.ts');
    assert.equal(row.code_challenge, s256Challenge(verifier));
    await assertNothingIssued(s.h, s.realm);
  });

  test('case=unknown client or unregistered redirect_uri is answered with 400 and no redirect/mode=browser', async (t) => {
    const s = await setup(t);
    await direct(s, 'unknown client', query({ client_id: 'nobody' }));
    await direct(s, 'missing client', query({}, ['client_id']));
    await direct(s, 'unregistered redirect', query({ redirect_uri: 'https://evil.example.com/callback' }));
    await direct(s, 'redirect with trailing slash', query({ redirect_uri: `${REDIRECT}/` }));
    await direct(s, 'redirect with extra query', query({ redirect_uri: `${REDIRECT}?next=/` }));
    await direct(s, 'missing redirect', query({}, ['redirect_uri']));
    // Client and redirect are checked before anything else, even a bad response_type.
    await direct(
      s,
      'unknown client, bad response_type',
      query({ client_id: 'nobody', response_type: 'token' }),
    );
    const unknownRealm = await authorize(s.h, 'no-such-realm', query());
    assert.equal(unknownRealm.status, 404);
  });

  test('case=errors after client and redirect are valid go to the redirect URI with state and iss/mode=browser', async (t) => {
    const s = await setup(t);
    await redirected(s, 'no PKCE', query({}, ['code_challenge', 'code_challenge_method']), 'invalid_request');
    await redirected(s, 'no challenge method', query({}, ['code_challenge_method']), 'invalid_request');
    await redirected(s, 'plain PKCE', query({ code_challenge_method: 'plain' }), 'invalid_request');
    await redirected(s, 'short challenge', query({ code_challenge: 'A'.repeat(42) }), 'invalid_request');
    await redirected(
      s,
      'response_type token',
      query({ response_type: 'token' }),
      'unsupported_response_type',
    );
    await redirected(
      s,
      'response_type code id_token',
      query({ response_type: 'code id_token' }),
      'unsupported_response_type',
    );
    await redirected(s, 'no response_type', query({}, ['response_type']), 'invalid_request');
    await redirected(s, 'bad scope', query({ scope: 'openid "quoted"' }), 'invalid_scope');
    const many = Array.from({ length: 51 }, (_, i) => `s${i}`).join(' ');
    await redirected(s, '51 scopes', query({ scope: many }), 'invalid_scope');
    await redirected(s, 'prompt none', query({ prompt: 'none' }), 'login_required');
    const six = query();
    for (let i = 0; i < 6; i++) six.append('resource', `https://api${i}.example.com`);
    await redirected(s, '6 resources', six, 'invalid_target');
    await assertNothingIssued(s.h, s.realm);
  });

  test('case=an unknown request_uri or an unsigned request object is answered directly/mode=browser', async (t) => {
    const s = await setup(t);
    // RFC 9126 and RFC 9101: the redirect URI they would name cannot be trusted, so no redirect.
    const uri = await direct(s, 'request_uri', query({ request_uri: 'urn:x' }));
    assert.equal(uri.error, 'invalid_request_uri');
    // A request object is verified, never silently ignored; alg none is refused.
    const unsigned = await direct(s, 'request', query({ request: 'eyJhbGciOiJub25lIn0.e30.' }));
    assert.equal(unsigned.error, 'invalid_request_object');
    await assertNothingIssued(s.h, s.realm);
  });

  test('case=a JWT response mode carries the error in a signed response/mode=browser', async (t) => {
    const s = await setup(t);
    const r = await authorize(s.h, s.realm.name, query({ response_mode: 'query.jwt', prompt: 'none' }));
    assert.equal(r.status, 303);
    const location = new URL(r.headers.get('location') ?? '');
    assert.deepEqual([...location.searchParams.keys()], ['response']);
    const issuer = `${s.h.ctx.config.server.publicOrigin}/realms/${s.realm.name}`;
    const jwks = createRemoteJWKSet(new URL(`${s.h.publicUrl}/realms/${s.realm.name}/jwks`));
    const { payload } = await jwtVerify(location.searchParams.get('response') ?? '', jwks, {
      issuer,
      audience: 'web-app',
    });
    assert.equal(payload.error, 'login_required');
    assert.equal(payload.state, 'st-123');
    assert.equal(await s.transactions(), 0);
  });

  test('case=unsupported response_mode, long login_hint and repeated parameters are 400/mode=browser', async (t) => {
    const s = await setup(t);
    for (const mode of ['form_post', 'fragment', 'fragment.jwt', 'form_post.jwt']) {
      const body = await direct(s, `response_mode ${mode}`, query({ response_mode: mode }));
      assert.equal(body.code, 'invalid_request');
    }
    await direct(s, 'login_hint of 513 bytes', query({ login_hint: 'a'.repeat(513) }));
    await direct(s, 'login_hint of 513 bytes in characters', query({ login_hint: `${'é'.repeat(256)}a` }));
    for (const name of [
      'client_id',
      'redirect_uri',
      'state',
      'scope',
      'code_challenge',
      'response_type',
      'nonce',
    ]) {
      const p = query();
      p.append(name, p.get(name) ?? 'x');
      await direct(s, `repeated ${name}`, p);
    }
    const maxAge = await direct(s, 'max_age not a number', query({ max_age: 'soon' }));
    assert.equal(maxAge.code, 'invalid_request');
    await assertNothingIssued(s.h, s.realm);
  });

  test('case=start fields are cut, never refused, at the authorize endpoint/mode=browser', async (t) => {
    const s = await setup(t);
    const r = await authorize(
      s.h,
      s.realm.name,
      query({ login_hint: 'é'.repeat(256), ui_locales: 'x'.repeat(200) }),
    );
    assert.equal(r.status, 303, await r.clone().text());
    const id = new URL(r.headers.get('location') ?? '').searchParams.get('transaction_id');
    const [row] = await rows(s.h, 'select login_hint, ui_locales from signin_transactions where id = $1', [
      id,
    ]);
    assert.equal(row?.login_hint, 'é'.repeat(127));
    assert.equal(row?.ui_locales, 'x'.repeat(64));

    const malformed = `${query().toString()}&login_hint=al%ED%A0%80ice%FF&ui_locales=de%E2%82`;
    const m = await authorize(s.h, s.realm.name, malformed);
    assert.equal(m.status, 303, 'malformed percent-encoding never fails the start');
    const nul = await authorize(s.h, s.realm.name, `${query().toString()}&login_hint=al%00ice`);
    assert.equal(nul.status, 303, 'a NUL in login_hint is removed');
    await direct(s, 'NUL in client_id', query({ client_id: 'web\u0000app' }));
    await direct(s, 'NUL in state', query({ state: 'st\u0000' }));
    const nulRealm = await authorize(s.h, 'x\u0000y', query());
    assert.equal(nulRealm.status, 404);
    const ua = await s.h.get(`/realms/${s.realm.name}/oauth/authorize?${query().toString()}`, {
      redirect: 'manual',
      headers: { 'user-agent': `Mozilla/5.0 ${'B'.repeat(3000)}` },
    });
    assert.equal(ua.status, 303);
    const uaId = new URL(ua.headers.get('location') ?? '').searchParams.get('transaction_id');
    const [uaRow] = await rows(s.h, 'select user_agent from signin_transactions where id = $1', [uaId]);
    assert.equal(Buffer.byteLength(uaRow?.user_agent), 256);
  });

  test('case=no login UI configured answers 503 and starts nothing/mode=browser', async (t) => {
    const s = await setup(t, false);
    const body = await direct(s, 'no login UI', query(), 503);
    assert.equal(body.code, 'temporarily_unavailable');
    await s.h.setPolicy(s.realm, { interaction: { login_ui_url: '' } });
    await direct(s, 'login UI ""', query(), 503);
    // Values today's policy validation refuses, as an older release may have stored them.
    for (const bad of ['not a url', 'javascript:alert(1)', 42]) {
      await s.h.storeUncheckedPolicy(s.realm, { interaction: { login_ui_url: bad } });
      await direct(s, `login UI ${JSON.stringify(bad)}`, query(), 503);
    }
    await assertNothingIssued(s.h, s.realm);
  });
});
