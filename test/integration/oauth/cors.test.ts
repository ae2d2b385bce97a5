// CORS for browser applications: public documents for any origin, the browser-facing endpoints
// only for origins of active clients, nothing for introspection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signinSetup } from '../../harness/signin-kit.ts';

const SPA_ORIGIN = 'https://spa.example.com';

async function setup(t: Parameters<typeof signinSetup>[0]) {
  const s = await signinSetup(t, {
    client: { clientId: 'spa', type: 'spa', allowedOrigins: [SPA_ORIGIN], tokenEndpointAuthMethod: 'none' },
  });
  const preflight = (path: string, origin: string) =>
    s.h.get(path, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
  return { ...s, preflight };
}

test('the token endpoint answers preflights and requests of a registered SPA origin only', async (t) => {
  const { h, realm, preflight } = await setup(t);
  const path = `/realms/${realm.name}/oauth/token`;
  const ok = await preflight(path, SPA_ORIGIN);
  assert.equal(ok.status, 204);
  assert.equal(ok.headers.get('access-control-allow-origin'), SPA_ORIGIN);
  assert.match(ok.headers.get('access-control-allow-methods') ?? '', /POST/);
  assert.match(ok.headers.get('access-control-allow-headers') ?? '', /content-type/);
  const other = await preflight(path, 'https://evil.example.com');
  assert.equal(other.status, 204);
  assert.equal(other.headers.get('access-control-allow-origin'), null);
  // The actual request (an error here) carries the header too, so the SPA can read the error.
  const res = await h.get(path, {
    method: 'POST',
    headers: { origin: SPA_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=authorization_code&client_id=spa&code=x&redirect_uri=x&code_verifier=' + 'a'.repeat(43),
  });
  assert.equal(res.status, 400);
  assert.equal(res.headers.get('access-control-allow-origin'), SPA_ORIGIN);
  assert.equal(res.headers.get('vary'), 'Origin');
});

test('a disabled client no longer opens its origin', async (t) => {
  const { h, realm, preflight } = await setup(t);
  await h.ctx.db.query(`update clients set state = 'disabled' where realm_id = $1 and client_id = 'spa'`, [
    realm.id,
  ]);
  const r = await preflight(`/realms/${realm.name}/oauth/userinfo`, SPA_ORIGIN);
  assert.equal(r.headers.get('access-control-allow-origin'), null);
});

test('discovery and the key set are readable from any origin; introspection from none', async (t) => {
  const { h, realm, preflight } = await setup(t);
  for (const path of [
    `/realms/${realm.name}/.well-known/openid-configuration`,
    `/realms/${realm.name}/jwks`,
  ]) {
    const r = await h.get(path, { headers: { origin: 'https://anywhere.example.org' } });
    assert.equal(r.status, 200, path);
    assert.equal(r.headers.get('access-control-allow-origin'), '*', path);
  }
  const intro = await preflight(`/realms/${realm.name}/oauth/introspect`, SPA_ORIGIN);
  assert.equal(intro.headers.get('access-control-allow-origin'), null);
});

test('a malformed realm segment gets no CORS headers and no server error', async (t) => {
  const { preflight } = await setup(t);
  const r = await preflight('/realms/%E0%A4%A/oauth/token', SPA_ORIGIN);
  assert.ok(r.status < 500, String(r.status));
  assert.equal(r.headers.get('access-control-allow-origin'), null);
});
