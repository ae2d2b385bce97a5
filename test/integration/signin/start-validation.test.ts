// POST /api/v1/realms/{realm}/auth/transactions: what a headless start refuses (nothing is
// created) and which over-long or malformed text fields it cuts instead of failing.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { findClient } from '../../../src/clients/clients.repo.ts';
import { json, newVerifier, startBody } from '../../harness/signin-driver.ts';
import { count, REDIRECT, rows, signinSetup } from '../../harness/signin-kit.ts';
import { grantResources } from '../../harness/token-kit.ts';

const NATIVE_LOOPBACK = 'http://127.0.0.1/callback';
const NATIVE_LOOPBACK_V6 = 'http://[::1]/callback';

async function setup(t: TestContext) {
  const { h, realm } = await signinSetup(t, { user: null });
  await h.createClient(realm, {
    clientId: 'cli-app',
    name: 'CLI App',
    type: 'native',
    redirectUris: [
      NATIVE_LOOPBACK,
      NATIVE_LOOPBACK_V6,
      'http://localhost/callback',
      'com.example.app:/callback',
    ],
  });
  await h.createClient(realm, {
    clientId: 'web-loopback',
    name: 'Web on loopback',
    type: 'web',
    redirectUris: ['http://127.0.0.1/callback'],
  });
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    h
      .get(`/api/v1/realms/${realm.name}/auth/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      })
      .then(json);
  const transactions = () => count(h, 'select 1 from signin_transactions where realm_id = $1', [realm.id]);
  return { h, realm, post, transactions };
}

const body = (extra: Record<string, unknown> = {}, clientId = 'web-app', redirectUri = REDIRECT) => ({
  ...startBody(clientId, redirectUri, newVerifier()),
  ...extra,
});

async function refused(
  s: Awaited<ReturnType<typeof setup>>,
  name: string,
  payload: unknown,
  expectedError?: string,
): Promise<void> {
  const before = await s.transactions();
  const r = await s.post(payload);
  assert.equal(r.status, 400, `${name}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body.code, 'invalid_request', name);
  if (expectedError) assert.equal(r.body.error, expectedError, name);
  assert.equal(await s.transactions(), before, `${name}: a transaction was created`);
}

async function accepted(s: Awaited<ReturnType<typeof setup>>, name: string, payload: unknown) {
  const r = await s.post(payload);
  assert.equal(r.status, 201, `${name}: ${JSON.stringify(r.body)}`);
  return r;
}

describe('sign-in › headless start', () => {
  test('case=a valid start returns the id, a continuation token once and the state/mode=headless', async (t) => {
    const s = await setup(t);
    const r = await accepted(s, 'valid', body());
    assert.deepEqual(Object.keys(r.body).sort(), ['continuation_token', 'state', 'transaction_id']);
    assert.match(r.body.transaction_id, /^atx_[0-9a-z]{26}$/);
    assert.match(r.body.continuation_token, /^pa_tx_[A-Za-z0-9_-]{43}$/);
    assert.equal(r.body.state.id, r.body.transaction_id);
    assert.equal(r.body.state.intent, 'login');
    assert.deepEqual(r.body.state.client, { client_id: 'web-app', name: 'Web App' });
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.equal(r.headers.get('set-cookie'), null, 'a headless start sets no cookie');
    const [row] = await rows(s.h, 'select * from signin_transactions where id = $1', [r.body.transaction_id]);
    assert.equal(row?.mode, 'headless');
    assert.notEqual(row?.binding_digest, r.body.continuation_token, 'the token is stored as a digest');
    assert.ok(!JSON.stringify(row).includes(r.body.continuation_token));
  });

  test('case=an unknown request_uri is refused and a request object is no member/mode=headless', async (t) => {
    const s = await setup(t);
    // RFC 9126: only a request_uri the PAR endpoint handed out counts (real-clients/par.test.ts).
    await refused(
      s,
      'request_uri',
      body({ request_uri: 'urn:ietf:params:oauth:request_uri:x' }),
      'invalid_request_uri',
    );
    // The headless start body has no request member: an unknown member.
    await refused(s, 'request', body({ request: 'eyJhbGciOiJub25lIn0.e30.' }));
  });

  test('case=unknown or disabled client is refused/mode=headless', async (t) => {
    const s = await setup(t);
    await refused(s, 'unknown client', body({}, 'no-such-client'));
    await s.h.ctx.db.query(
      `update clients set state = 'disabled' where realm_id = $1 and client_id = 'web-app'`,
      [s.realm.id],
    );
    await refused(s, 'disabled client', body());
    const missing = await s.post({ ...body(), client_id: undefined });
    assert.equal(missing.status, 400);
    assert.equal(await s.transactions(), 0);
    const unknownRealm = await s.h.get('/api/v1/realms/no-such-realm/auth/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body()),
    });
    assert.equal(unknownRealm.status, 404);
  });

  test('case=a redirect URI must equal a registered one exactly/mode=headless', async (t) => {
    const s = await setup(t);
    const tricks = [
      'https://app.example.com/callback/',
      'https://APP.example.com/callback',
      'https://app.example.com/Callback',
      'HTTPS://app.example.com/callback',
      'https://app.example.com/callback?x=1',
      'https://app.example.com/callback?',
      'https://app.example.com/callback#frag',
      'https://app.example.com/callback#',
      'https://app.example.com:443/callback',
      'http://app.example.com/callback',
      'https://app.example.com/callback/../callback',
      'https://app.example.com/callbackx',
      'https://app.example.com/callback%2F',
      'https://app.example.com./callback',
      'https://user@app.example.com/callback',
      'https://app.example.com.evil.test/callback',
      'https://evil.test/https://app.example.com/callback',
      ' https://app.example.com/callback',
      'https://app.example.com/callback ',
    ];
    for (const uri of tricks) await refused(s, uri, body({}, 'web-app', uri));
    await accepted(s, 'exact', body());
  });

  test('case=loopback port flexibility only for native clients on IP literals/mode=headless', async (t) => {
    const s = await setup(t);
    await accepted(s, 'v4 any port', body({}, 'cli-app', 'http://127.0.0.1:53123/callback'));
    await accepted(s, 'v4 no port', body({}, 'cli-app', NATIVE_LOOPBACK));
    await accepted(s, 'v6 any port', body({}, 'cli-app', 'http://[::1]:8400/callback'));
    await accepted(s, 'private-use scheme', body({}, 'cli-app', 'com.example.app:/callback'));
    await refused(
      s,
      'localhost is never port-flexible',
      body({}, 'cli-app', 'http://localhost:53123/callback'),
    );
    await refused(s, 'v4 other path', body({}, 'cli-app', 'http://127.0.0.1:53123/other'));
    await refused(s, 'v4 extra query', body({}, 'cli-app', 'http://127.0.0.1:53123/callback?x=1'));
    await refused(s, 'v4 other address', body({}, 'cli-app', 'http://127.0.0.2:53123/callback'));
    await refused(s, 'https loopback', body({}, 'cli-app', 'https://127.0.0.1:53123/callback'));
    await s.h.createClient(s.realm, {
      clientId: 'cli-v4',
      name: 'CLI v4',
      type: 'native',
      redirectUris: [NATIVE_LOOPBACK],
    });
    await refused(s, 'v6 when only v4 is registered', body({}, 'cli-v4', 'http://[::1]:53123/callback'));
    await refused(
      s,
      'localhost when only v4 is registered',
      body({}, 'cli-v4', 'http://localhost:53123/callback'),
    );
    await refused(s, 'leading zero port', body({}, 'cli-app', 'http://127.0.0.1:08080/callback'));
    await refused(s, 'web client on loopback', body({}, 'web-loopback', 'http://127.0.0.1:53123/callback'));
    await accepted(s, 'web client exact', body({}, 'web-loopback', 'http://127.0.0.1/callback'));
  });

  test('case=PKCE S256 with a 43-character challenge is required/mode=headless', async (t) => {
    const s = await setup(t);
    const good = body();
    const { code_challenge: _c, ...noChallenge } = good;
    const { code_challenge_method: _m, ...noMethod } = good;
    await refused(s, 'no challenge', noChallenge);
    await refused(s, 'no method', noMethod);
    await refused(s, 'plain', { ...good, code_challenge_method: 'plain' });
    await refused(s, 'plain verifier as challenge', {
      ...good,
      code_challenge: newVerifier(),
      code_challenge_method: 'plain',
    });
    await refused(s, 'lower-case method', { ...good, code_challenge_method: 's256' });
    await refused(s, '42 characters', { ...good, code_challenge: good.code_challenge.slice(0, 42) });
    await refused(s, '44 characters', { ...good, code_challenge: `${good.code_challenge}A` });
    await refused(s, 'padded', { ...good, code_challenge: `${good.code_challenge}=` });
    await refused(s, 'not base64url', { ...good, code_challenge: `${good.code_challenge.slice(0, 42)}+` });
    await accepted(s, 'S256', good);
  });

  test('case=scope and resource limits/mode=headless', async (t) => {
    const s = await setup(t);
    const scopes = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`).join(' ');
    await accepted(s, '50 scopes', body({ scope: scopes(50) }));
    await refused(s, '51 scopes', body({ scope: scopes(51) }));
    await refused(s, 'double space', body({ scope: 'openid  profile' }));
    await refused(s, 'quote in scope', body({ scope: 'openid "x"' }));
    await refused(s, '129-character scope', body({ scope: 'a'.repeat(129) }));
    const resources = (n: number) => Array.from({ length: n }, (_, i) => `https://api${i}.example.com`);
    const webApp = await findClient(s.h.ctx.db, s.realm.id, 'web-app');
    assert.ok(webApp);
    await grantResources(s.h, s.realm, webApp, resources(5));
    await accepted(s, '5 resources', body({ resource: resources(5) }));
    await refused(s, '6 resources', body({ resource: resources(6) }));
    await refused(s, 'relative resource', body({ resource: ['/api'] }));
    await refused(s, 'resource with fragment', body({ resource: ['https://api.example.com/#x'] }));
    await refused(
      s,
      'unregistered resource',
      body({ resource: ['https://unknown.example.com'] }),
      'invalid_target',
    );
    await refused(
      s,
      'resource not granted',
      body({ resource: [`${s.h.ctx.config.server.publicOrigin}/api/v1/realms/${s.realm.name}`] }),
      'invalid_target',
    );
  });

  test('case=response_mode, prompt and intent are checked/mode=headless', async (t) => {
    const s = await setup(t);
    for (const mode of ['query', 'query.jwt', 'jwt']) await accepted(s, mode, body({ response_mode: mode }));
    for (const mode of ['form_post', 'fragment', 'form_post.jwt', 'fragment.jwt', 'web_message', 'QUERY']) {
      await refused(s, `response_mode ${mode}`, body({ response_mode: mode }));
    }
    await refused(s, 'prompt none', body({ prompt: 'none' }));
    await refused(s, 'prompt login none', body({ prompt: 'login none' }));
    await refused(s, 'unknown prompt', body({ prompt: 'sometimes' }));
    await accepted(s, 'prompt login', body({ prompt: 'login' }));
    await refused(s, 'intent register', body({ intent: 'register' }));
    await refused(s, 'intent unknown', body({ intent: 'step_up' }));
    await accepted(s, 'intent login', body({ intent: 'login' }));
    await refused(s, 'claims not JSON', body({ claims: '{not json' }));
    await refused(s, 'unknown member', body({ response_type: 'code' }));
    await refused(s, 'server-owned member', body({ mfa_passed: true }));
  });

  test('case=over-long login_hint, ui_locales and user agent are cut, never refused/mode=headless', async (t) => {
    const s = await setup(t);
    const loginHint = 'é'.repeat(499) + 'xy'; // 1000 bytes; byte 254 falls inside a character
    const uiLocales = '😀'.repeat(50); // 200 bytes of four-byte characters
    const userAgent = `Mozilla/5.0 ${'A'.repeat(2036)}`; // 2 KiB
    const r = await s.post(body({ login_hint: loginHint, ui_locales: uiLocales }), {
      'user-agent': userAgent,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const [row] = await rows(
      s.h,
      'select login_hint, ui_locales, user_agent from signin_transactions where id = $1',
      [r.body.transaction_id],
    );
    assert.equal(row?.login_hint, 'é'.repeat(127));
    assert.equal(Buffer.byteLength(row?.login_hint), 254);
    assert.equal(row?.ui_locales, '😀'.repeat(16));
    assert.equal(Buffer.byteLength(row?.ui_locales), 64);
    assert.equal(row?.user_agent, userAgent.slice(0, 256));
    assert.equal(r.body.state.locale, '😀'.repeat(16));
  });

  test('case=NUL characters are refused in parameters and removed from cut fields/mode=headless', async (t) => {
    const s = await setup(t);
    for (const name of [
      'client_id',
      'redirect_uri',
      'state',
      'nonce',
      'scope',
      'acr_values',
      'organization',
      'claims',
    ]) {
      await refused(s, `NUL in ${name}`, { ...body(), [name]: `x\u0000y` });
    }
    await refused(s, 'NUL in resource', body({ resource: ['https://api.example.com/\u0000'] }));
    const r = await accepted(
      s,
      'NUL in cut fields',
      body({ login_hint: 'al\u0000ice', ui_locales: '\u0000de' }),
    );
    const [row] = await rows(s.h, 'select login_hint, ui_locales from signin_transactions where id = $1', [
      r.body.transaction_id,
    ]);
    assert.equal(row?.login_hint, 'alice');
    assert.equal(row?.ui_locales, 'de');
    const realm = await s.h.get('/api/v1/realms/x%00y/auth/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body()),
    });
    assert.equal(realm.status, 404);
  });

  test('case=lone surrogates in start fields are removed, never refused/mode=headless', async (t) => {
    const s = await setup(t);
    const raw = JSON.stringify(body()).replace(
      /}$/,
      ',"login_hint":"al\\ud800ice@example.com\\udc00","ui_locales":"\\udbffde-CH \\ud83d\\ude00"}',
    );
    const r = await s.post(raw);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const [row] = await rows(s.h, 'select login_hint, ui_locales from signin_transactions where id = $1', [
      r.body.transaction_id,
    ]);
    assert.equal(row?.login_hint, 'alice@example.com');
    assert.equal(row?.ui_locales, 'de-CH 😀', 'a valid surrogate pair is kept');

    // Bytes that are not UTF-8 are dropped the same way.
    const json = JSON.stringify(body());
    const bytes = Buffer.concat([
      Buffer.from(`${json.slice(0, -1)},"login_hint":"bo`),
      Buffer.from([0xff, 0xc3, 0xed, 0xa0, 0x80]),
      Buffer.from('b@example.com"}'),
    ]);
    const b = await s.h.get(`/api/v1/realms/${s.realm.name}/auth/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bytes,
    });
    assert.equal(b.status, 201);
    const created = (await b.json()) as { transaction_id: string };
    const [second] = await rows(s.h, 'select login_hint from signin_transactions where id = $1', [
      created.transaction_id,
    ]);
    assert.equal(second?.login_hint, 'bob@example.com');

    // Strictness is otherwise unchanged on this route.
    const dup = await s.post(json.replace(/}$/, ',"STATE":"again"}'));
    assert.equal(dup.status, 400);
    const latin = await s.post(json, { 'content-type': 'application/json; charset=latin1' });
    assert.equal(latin.status, 415);
  });
});
