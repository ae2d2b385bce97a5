// Provider metadata (OpenID Connect Discovery 1.0, RFC 8414): the same document at the three
// locations, the issuer exact, and every advertised endpoint really served.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startHarness } from '../../harness/harness.ts';

async function setup(t: Parameters<typeof startHarness>[0]) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  return { h, realm };
}

const paths = (name: string) => [
  `/realms/${name}/.well-known/openid-configuration`,
  `/.well-known/oauth-authorization-server/realms/${name}`,
  `/realms/${name}/.well-known/oauth-authorization-server`,
];

test('the three locations serve one document whose issuer is the realm issuer, cacheable', async (t) => {
  const { h, realm } = await setup(t);
  const docs = [];
  for (const path of paths(realm.name)) {
    const res = await h.get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    docs.push(await res.json());
  }
  assert.deepEqual(docs[1], docs[0]);
  assert.deepEqual(docs[2], docs[0]);
  const doc = docs[0] as Record<string, unknown>;
  const issuer = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`;
  assert.equal(doc.issuer, issuer);
  assert.equal(doc.jwks_uri, `${issuer}/jwks`);
  assert.deepEqual(doc.response_types_supported, ['code']);
  assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
  assert.deepEqual(doc.subject_types_supported, ['public']);
  assert.equal(doc.authorization_response_iss_parameter_supported, true);
  // Only PAR URNs are taken as request_uri (RFC 9126); signed request objects are (RFC 9101).
  assert.equal(doc.request_uri_parameter_supported, false);
  assert.equal(doc.request_parameter_supported, true);
  assert.equal(doc.pushed_authorization_request_endpoint, `${issuer}/oauth/par`);
  assert.equal(doc.require_pushed_authorization_requests, false);
  assert.ok(!(doc.request_object_signing_alg_values_supported as string[]).includes('none'));
  assert.deepEqual(doc.acr_values_supported, ['basic', 'mfa', 'phishing_resistant']);
  assert.deepEqual(doc.ui_locales_supported, ['en', 'de']);
  assert.ok(!(doc.introspection_endpoint_auth_methods_supported as string[]).includes('none'));
  assert.ok((doc.token_endpoint_auth_methods_supported as string[]).includes('none'));
  for (const alg of doc.token_endpoint_auth_signing_alg_values_supported as string[]) {
    assert.ok(['RS256', 'PS256', 'ES256', 'EdDSA'].includes(alg), alg);
  }
  assert.deepEqual(doc.scopes_supported, ['openid', 'profile', 'email', 'phone', 'offline_access']);
});

test('the advertised signing algorithm is the one of the realm key', async (t) => {
  const { h, realm } = await setup(t);
  const doc = (await (await h.get(paths(realm.name)[0] as string)).json()) as Record<string, unknown>;
  const jwks = (await (await h.get(`/realms/${realm.name}/jwks`)).json()) as { keys: { alg: string }[] };
  const algs = [...new Set(jwks.keys.map((k) => k.alg))];
  assert.deepEqual(doc.id_token_signing_alg_values_supported, algs);
  assert.deepEqual(doc.authorization_signing_alg_values_supported, algs);
});

test('every advertised endpoint is served (none answers 404)', async (t) => {
  const { h, realm } = await setup(t);
  const doc = (await (await h.get(paths(realm.name)[0] as string)).json()) as Record<string, string>;
  const origin = h.ctx.config.server.publicOrigin;
  const local = (url: string) => {
    assert.ok(url.startsWith(`${origin}/realms/${realm.name}/`), url);
    return url.slice(origin.length);
  };
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const probes: [string, RequestInit][] = [
    ['authorization_endpoint', { redirect: 'manual' }],
    ['token_endpoint', { method: 'POST', headers: form, body: 'grant_type=authorization_code' }],
    ['userinfo_endpoint', {}],
    ['jwks_uri', {}],
    ['revocation_endpoint', { method: 'POST', headers: form, body: 'token=x' }],
    ['introspection_endpoint', { method: 'POST', headers: form, body: 'token=x' }],
    ['end_session_endpoint', { redirect: 'manual' }],
    ['pushed_authorization_request_endpoint', { method: 'POST', headers: form, body: 'response_type=code' }],
  ];
  for (const [member, init] of probes) {
    const url = doc[member];
    assert.ok(url, member);
    const res = await h.get(local(url), init);
    assert.notEqual(res.status, 404, `${member} ${url}`);
    assert.ok(res.status < 500, `${member} answered ${res.status}`);
  }
});

test('an unknown realm is 404 at every location', async (t) => {
  const { h } = await setup(t);
  for (const path of paths('nosuchrealm')) assert.equal((await h.get(path)).status, 404, path);
});
