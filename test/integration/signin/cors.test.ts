// CORS on the transaction API (docs/signin.md, "Login UI on another origin"): exactly the origins
// the step binding accepts (the public origin and the allowed_origins of active clients) get
// credentialed CORS answers, named and never `*`; any other origin gets no CORS header at all.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { json } from '../../harness/signin-driver.ts';
import { PASSWORD, REDIRECT, signinSetup, startBrowser } from '../../harness/signin-kit.ts';

const UI_ORIGIN = 'https://login.example.com';
const SPA_ORIGIN = 'https://spa.example.com';
const EVIL = 'https://evil.example.net';

async function setup(t: TestContext) {
  const s = await signinSetup(t, {
    loginUi: `${UI_ORIGIN}/signin`,
    client: { allowedOrigins: [UI_ORIGIN] },
  });
  await s.h.createClient(s.realm, {
    clientId: 'spa',
    name: 'SPA',
    type: 'spa',
    redirectUris: [`${SPA_ORIGIN}/callback`],
    allowedOrigins: [SPA_ORIGIN],
    tokenEndpointAuthMethod: 'none',
  });
  const base = `/api/v1/realms/${s.realm.name}/auth/transactions`;
  const preflight = (path: string, origin: string, method = 'POST') =>
    s.h.get(path, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type,x-csrf-token',
      },
    });
  return { ...s, base, preflight };
}

function assertAllowed(res: { headers: Headers }, origin: string, what: string): void {
  assert.equal(res.headers.get('access-control-allow-origin'), origin, what);
  assert.equal(res.headers.get('access-control-allow-credentials'), 'true', what);
  assert.match(res.headers.get('vary') ?? '', /\bOrigin\b/, what);
}

function assertNoCors(res: { headers: Headers }, what: string): void {
  for (const [name] of res.headers) assert.ok(!name.startsWith('access-control-'), `${what}: ${name}`);
}

describe('sign-in › CORS on the transaction API', () => {
  test('case=preflights of start, state and steps answer allowed origins only', async (t) => {
    const { h, base, preflight } = await setup(t);
    const paths = [base, `${base}/atx_x`, `${base}/atx_x/identify`, `${base}/atx_x/mfa/totp`];
    for (const path of paths) {
      for (const origin of [UI_ORIGIN, SPA_ORIGIN, h.ctx.config.server.publicOrigin]) {
        const r = await preflight(path, origin);
        assert.equal(r.status, 204, path);
        assertAllowed(r, origin, `${path} from ${origin}`);
        assert.deepEqual((r.headers.get('access-control-allow-methods') ?? '').split(/,\s*/).sort(), [
          'GET',
          'POST',
        ]);
        const headers = (r.headers.get('access-control-allow-headers') ?? '').split(/,\s*/);
        for (const needed of ['content-type', 'x-csrf-token', 'x-transaction-token', 'x-request-id'])
          assert.ok(headers.includes(needed), `${needed} in ${headers}`);
      }
      for (const origin of [EVIL, 'null', `${UI_ORIGIN}:8443`, 'http://login.example.com']) {
        const r = await preflight(path, origin);
        assert.equal(r.status, 204);
        assertNoCors(r, `${path} from ${origin}`);
      }
    }
  });

  test('case=state reads and steps carry the headers for an allowed origin, errors included', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT, { origin: UI_ORIGIN });
    const state = await tx.get({ cookie: `pa_tx=${tx.cookie}`, origin: UI_ORIGIN });
    assert.equal(state.status, 200);
    assertAllowed(state, UI_ORIGIN, 'state');
    const foreign = await tx.get({ cookie: `pa_tx=${tx.cookie}`, origin: EVIL });
    assertNoCors(foreign, 'state from another origin');
    assert.match(foreign.headers.get('vary') ?? '', /\bOrigin\b/);

    // A refused step (wrong CSRF token) still lets the login UI read the problem.
    const refused = await tx.step('identify', { identifier: 'alice@example.com' }, { 'x-csrf-token': 'x' });
    assert.equal(refused.status, 403);
    assertAllowed(refused, UI_ORIGIN, 'refused step');
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.equal(identified.status, 200, JSON.stringify(identified.body));
    assertAllowed(identified, UI_ORIGIN, 'step');
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assertAllowed(done, UI_ORIGIN, 'completing step');

    // The origin the binding refuses gets no CORS headers either: one rule for both.
    const other = await startBrowser(h, realm.name, 'web-app', REDIRECT, { origin: EVIL });
    const blocked = await other.step('identify', { identifier: 'alice@example.com' });
    assert.equal(blocked.status, 403);
    assertNoCors(blocked, 'step from a refused origin');
  });

  test('case=a headless start from a browser app names it back; unknown realms get nothing', async (t) => {
    const { h, base } = await setup(t);
    const body = JSON.stringify({
      client_id: 'spa',
      redirect_uri: `${SPA_ORIGIN}/callback`,
      scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const start = await json(
      await h.get(base, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: SPA_ORIGIN },
        body,
      }),
    );
    assert.equal(start.status, 201, JSON.stringify(start.body));
    assertAllowed(start, SPA_ORIGIN, 'start');
    const missing = await h.get('/api/v1/realms/nosuchrealm/auth/transactions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: SPA_ORIGIN },
      body,
    });
    assert.equal(missing.status, 404);
    assertNoCors(missing, 'unknown realm');
    const malformed = await preflight(h, '/api/v1/realms/%E0%A4%A/auth/transactions');
    assert.ok(malformed.status < 500, String(malformed.status));
    assertNoCors(malformed, 'malformed realm');
  });

  test('case=a disabled client no longer opens its origin', async (t) => {
    const { h, realm, base, preflight: pre } = await setup(t);
    assertAllowed(await pre(base, SPA_ORIGIN), SPA_ORIGIN, 'before');
    await h.ctx.db.query(`update clients set state = 'disabled' where realm_id = $1 and client_id = 'spa'`, [
      realm.id,
    ]);
    assertNoCors(await pre(base, SPA_ORIGIN), 'after');
  });
});

const preflight = (h: { get: (p: string, i?: RequestInit) => Promise<Response> }, path: string) =>
  h.get(path, {
    method: 'OPTIONS',
    headers: { origin: SPA_ORIGIN, 'access-control-request-method': 'POST' },
  });
