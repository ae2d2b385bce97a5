// Mutual TLS (RFC 8705, docs/oauth-mtls.md) with oauth4webapi as the client: self_signed_tls_client_auth
// on the mutual-TLS listener, certificate-bound access tokens at the administration API, /me and
// UserInfo, and the Client-Cert header of an untrusted peer ignored. Every refusal checks that no
// token was issued.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import { accountAudience, adminAudience, issuerOf } from '../../../src/kernel/audiences.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { CLI_REDIRECT } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { certThumbprint } from '../../harness/mtls-certs.ts';
import {
  clientCertHeader,
  mtlsFetch,
  selfSignedCertificate,
  startMtlsListener,
  type TestCertificate,
} from '../../harness/mtls-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { codeOf, PASSWORD } from '../../harness/signin-kit.ts';
import {
  basic,
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
  seedServiceClient,
  tokensIssued,
} from '../../harness/token-kit.ts';

const http = { [oauth.allowInsecureRequests]: true } as const;

interface Setup {
  h: Harness;
  realm: RealmRow;
  server: TestCertificate;
  client: TestCertificate;
  other: TestCertificate;
  mtlsUrl: string;
}

async function setup(t: TestContext, overrides: Record<string, unknown> = {}): Promise<Setup> {
  const h = await startHarness(t, { publicOriginIsListener: true, overrides });
  const realm = await h.createRealm();
  const [server, client, other] = await Promise.all([
    selfSignedCertificate('localhost', '127.0.0.1'),
    selfSignedCertificate('mtls-svc'),
    selfSignedCertificate('someone-else'),
  ]);
  const { url } = await startMtlsListener(t, h, server);
  h.ctx.config.server.mtlsOrigin = url;
  const row = await h.createClient(realm, {
    clientId: 'mtls-svc',
    name: 'mtls-svc',
    type: 'service',
    redirectUris: [],
    grantTypes: ['client_credentials'],
    tokenEndpointAuthMethod: 'self_signed_tls_client_auth',
    jwks: { keys: [client.jwk] },
  });
  await h.ctx.db.query(
    `insert into service_principals (realm_id, id, client_row_id, state, created_at, updated_at)
     values ($1, 'spr_mtlssvc01', $2, 'active', now(), now())`,
    [realm.id, row.id],
  );
  await seedGrant(h, realm, row, 'builtin:admin', { scopes: [], subjectTypes: ['service_principal'] });
  return { h, realm, server, client, other, mtlsUrl: url };
}

async function serviceToken(s: Setup, t: TestContext, cert: TestCertificate) {
  const issuer = new URL(issuerOf(s.h.ctx.config.server.publicOrigin, s.realm.name));
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, http));
  const client: oauth.Client = { client_id: 'mtls-svc', use_mtls_endpoint_aliases: true };
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    oauth.TlsClientAuth(),
    new URLSearchParams({ resource: adminAudience(s.h.ctx.config.server.publicOrigin, s.realm.name) }),
    { ...http, [oauth.customFetch]: mtlsFetch(t, s.server, cert) },
  );
  return { as, client, response };
}

test('discovery names the mutual-TLS aliases, the bound-token support and the self-signed method', async (t) => {
  const s = await setup(t);
  const issuer = new URL(issuerOf(s.h.ctx.config.server.publicOrigin, s.realm.name));
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, http));
  assert.equal(as.tls_client_certificate_bound_access_tokens, true);
  assert.equal(as.mtls_endpoint_aliases?.token_endpoint, `${issuerOf(s.mtlsUrl, s.realm.name)}/oauth/token`);
  assert.ok(as.token_endpoint_auth_methods_supported?.includes('self_signed_tls_client_auth'));
});

test('a self-signed client certificate authenticates the client and binds its token to the certificate', async (t) => {
  const s = await setup(t);
  const { as, client, response } = await serviceToken(s, t, s.client);
  const result = await oauth.processClientCredentialsResponse(as, client, response);
  const claims = decodeJwt(result.access_token);
  assert.deepEqual(claims.cnf, { 'x5t#S256': certThumbprint(s.client) });

  const users = `/api/v1/realms/${s.realm.name}/users`;
  const bearer = { authorization: `Bearer ${result.access_token}` };
  // With its certificate the token is accepted (the service principal holds no permission: 403).
  const withCert = await mtlsFetch(t, s.server, s.client)(`${s.mtlsUrl}${users}`, { headers: bearer });
  assert.equal(withCert.status, 403);
  // Without a certificate, or with another one, it is no token at all.
  const plain = await s.h.get(users, { headers: bearer });
  assert.equal(plain.status, 401);
  assert.match(plain.headers.get('www-authenticate') ?? '', /invalid_token/);
  const noCert = await mtlsFetch(t, s.server)(`${s.mtlsUrl}${users}`, { headers: bearer });
  assert.equal(noCert.status, 401);
  const otherCert = await mtlsFetch(t, s.server, s.other)(`${s.mtlsUrl}${users}`, { headers: bearer });
  assert.equal(otherCert.status, 401);
});

test('another certificate, or none, does not authenticate a self_signed_tls_client_auth client', async (t) => {
  const s = await setup(t);
  const before = await tokensIssued(s.h);
  const { as, client, response } = await serviceToken(s, t, s.other);
  await assert.rejects(oauth.processClientCredentialsResponse(as, client, response), (e: unknown) => {
    assert.ok(e instanceof oauth.ResponseBodyError);
    assert.equal(e.error, 'invalid_client');
    return true;
  });
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'mtls-svc' });
  const noCert = await mtlsFetch(t, s.server)(`${issuerOf(s.mtlsUrl, s.realm.name)}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  assert.equal(noCert.status, 401);
  assert.equal(((await noCert.json()) as { error: string }).error, 'invalid_client');
  assert.equal(await tokensIssued(s.h), before);
});

test('a Client-Cert header counts only from a trusted proxy', async (t) => {
  const post = (s: Setup) =>
    s.h.get(`/realms/${s.realm.name}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'client-cert': clientCertHeader(s.client),
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'mtls-svc',
        resource: adminAudience(s.h.ctx.config.server.publicOrigin, s.realm.name),
      }).toString(),
    });

  await t.test('untrusted peer: ignored, nothing issued', async (t) => {
    const s = await setup(t);
    const before = await tokensIssued(s.h);
    const r = await post(s);
    assert.equal(r.status, 401);
    assert.equal(((await r.json()) as { error: string }).error, 'invalid_client');
    assert.equal(await tokensIssued(s.h), before);
  });

  await t.test('trusted proxy: the forwarded certificate authenticates and binds', async (t) => {
    const s = await setup(t, { 'server.trusted_proxies': '127.0.0.1/32' });
    const r = await post(s);
    assert.equal(r.status, 200);
    const body = (await r.json()) as { access_token: string };
    assert.deepEqual(decodeJwt(body.access_token).cnf, { 'x5t#S256': certThumbprint(s.client) });
  });
});

test('a public client presenting a certificate gets bound tokens that /me and UserInfo take only with it', async (t) => {
  const s = await setup(t);
  await s.h.createUser(s.realm, { email: 'mtls-user@example.com', password: PASSWORD });
  const origin = s.h.ctx.config.server.publicOrigin;
  const tx = await startHeadless(s.h, s.realm.name, CLI_CLIENT_ID, CLI_REDIRECT, {
    scope: 'openid',
    resource: [accountAudience(origin, s.realm.name)],
  });
  await tx.step('identify', { identifier: 'mtls-user@example.com' });
  const done = await tx.step('password', { password: PASSWORD });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  const withCert = mtlsFetch(t, s.server, s.client);
  const exchanged = await withCert(`${issuerOf(s.mtlsUrl, s.realm.name)}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: CLI_CLIENT_ID,
      code: codeOf(done.body.redirect_to),
      redirect_uri: CLI_REDIRECT,
      code_verifier: tx.verifier,
      resource: accountAudience(origin, s.realm.name),
    }).toString(),
  });
  assert.equal(exchanged.status, 200);
  const token = ((await exchanged.json()) as { access_token: string }).access_token;
  assert.deepEqual(decodeJwt(token).cnf, { 'x5t#S256': certThumbprint(s.client) });
  const bearer = { authorization: `Bearer ${token}` };

  const sessions = `/api/v1/realms/${s.realm.name}/me/sessions`;
  assert.equal((await withCert(`${s.mtlsUrl}${sessions}`, { headers: bearer })).status, 200);
  assert.equal((await s.h.get(sessions, { headers: bearer })).status, 401);
  assert.equal(
    (await mtlsFetch(t, s.server, s.other)(`${s.mtlsUrl}${sessions}`, { headers: bearer })).status,
    401,
  );
  assert.equal(
    (await s.h.get(sessions, { headers: { ...bearer, 'client-cert': clientCertHeader(s.client) } })).status,
    401,
  );

  const userinfo = `/realms/${s.realm.name}/oauth/userinfo`;
  assert.equal((await withCert(`${s.mtlsUrl}${userinfo}`, { headers: bearer })).status, 200);
  const plain = await s.h.get(userinfo, { headers: bearer });
  assert.equal(plain.status, 401);
  assert.match(plain.headers.get('www-authenticate') ?? '', /invalid_token/);
});

test('a secret client presenting a certificate gets a bound token that introspection shows with its cnf', async (t) => {
  const s = await setup(t);
  const api = 'https://orders.example.com';
  const resource = await seedResource(s.h, s.realm, { audience: api, scopes: ['orders:read'] });
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  await seedGrant(s.h, s.realm, svc.client, resource, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const rs = await seedServiceClient(s.h, s.realm, 'orders-api');
  await registerIntrospector(s.h, s.realm, resource, rs.client);

  const r = await mtlsFetch(
    t,
    s.server,
    s.client,
  )(`${issuerOf(s.mtlsUrl, s.realm.name)}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(svc.creds.clientId, svc.creds.secret),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: api }).toString(),
  });
  assert.equal(r.status, 200);
  const body = (await r.json()) as { access_token: string; token_type: string };
  assert.equal(body.token_type, 'Bearer');
  const introspected = await oauthPost(s.h, s.realm, 'introspect', { token: body.access_token }, rs.creds);
  assert.equal(introspected.body.active, true);
  assert.deepEqual(introspected.body.cnf, { 'x5t#S256': certThumbprint(s.client) });
});
