// tls_client_auth (RFC 8705 section 2.1) registered through the administration API and used at the
// token endpoint of the mutual-TLS listener by oauth4webapi, and the certificate binding of a
// public client's refresh tokens (section 4). Every refusal checks that nothing was issued.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import { accountAudience, adminAudience, issuerOf } from '../../../src/kernel/audiences.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { apiCaller, CLI_REDIRECT } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { certThumbprint, issuedCertificate, type TestCa, testCa } from '../../harness/mtls-certs.ts';
import {
  mtlsFetch,
  selfSignedCertificate,
  startMtlsListener,
  type TestCertificate,
} from '../../harness/mtls-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { codeOf, PASSWORD } from '../../harness/signin-kit.ts';
import { seedGrant, tokensIssued } from '../../harness/token-kit.ts';

const http = { [oauth.allowInsecureRequests]: true } as const;

interface Setup {
  h: Harness;
  realm: RealmRow;
  server: TestCertificate;
  ca: TestCa;
  mtlsUrl: string;
}

async function setup(t: TestContext): Promise<Setup> {
  const h = await startHarness(t, { publicOriginIsListener: true });
  const realm = await h.createRealm();
  const [server, ca] = await Promise.all([
    selfSignedCertificate('localhost', '127.0.0.1'),
    testCa('C=DE, O=Acme, CN=Acme Issuing CA'),
  ]);
  const { url } = await startMtlsListener(t, h, server);
  h.ctx.config.server.mtlsOrigin = url;
  return { h, realm, server, ca, mtlsUrl: url };
}

const tokenUrl = (s: Setup) => `${issuerOf(s.mtlsUrl, s.realm.name)}/oauth/token`;
const form = (f: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(f).toString(),
});

test('a tls_client_auth client registered with a subject DN and its CA gets certificate-bound tokens', async (t) => {
  const s = await setup(t);
  const admin = await apiCaller(s.h, s.realm);
  const created = await admin.call('POST', '/clients', {
    client_id: 'billing',
    name: 'Billing',
    type: 'service',
    token_endpoint_auth_method: 'tls_client_auth',
    tls_client_auth_subject_dn: 'cn=billing, o=Acme, c=DE',
    tls_client_auth_trust_anchors: [s.ca.certPem],
  });
  assert.equal(created.status, 201, await created.clone().text());
  const body = (await created.json()) as Record<string, unknown>;
  assert.equal(body.tls_client_auth_subject_dn, 'cn=billing, o=Acme, c=DE');
  assert.equal((body.tls_client_auth_trust_anchors as string[]).length, 1);
  assert.deepEqual(body.secrets, []);
  const row = await s.h.ctx.db.query<ClientRow>(
    'select * from clients where realm_id = $1 and client_id = $2',
    [s.realm.id, 'billing'],
  );
  await seedGrant(s.h, s.realm, row.rows[0] as ClientRow, 'builtin:admin', {
    scopes: [],
    subjectTypes: ['service_principal'],
  });

  const [good, wrongName, otherCa] = await Promise.all([
    issuedCertificate(s.ca, 'C=DE, O=Acme, CN=billing'),
    issuedCertificate(s.ca, 'C=DE, O=Acme, CN=shipping'),
    testCa('C=DE, O=Acme, CN=Acme Issuing CA').then((ca) =>
      issuedCertificate(ca, 'C=DE, O=Acme, CN=billing'),
    ),
  ]);
  const issuer = new URL(issuerOf(s.h.ctx.config.server.publicOrigin, s.realm.name));
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, http));
  assert.ok(as.token_endpoint_auth_methods_supported?.includes('tls_client_auth'));
  const client: oauth.Client = { client_id: 'billing', use_mtls_endpoint_aliases: true };
  const resource = adminAudience(s.h.ctx.config.server.publicOrigin, s.realm.name);
  const request = (cert?: TestCertificate) =>
    oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.TlsClientAuth(),
      new URLSearchParams({ resource }),
      {
        ...http,
        [oauth.customFetch]: mtlsFetch(t, s.server, cert),
      },
    );

  const result = await oauth.processClientCredentialsResponse(as, client, await request(good));
  assert.deepEqual(decodeJwt(result.access_token).cnf, { 'x5t#S256': certThumbprint(good) });

  const before = await tokensIssued(s.h);
  for (const cert of [wrongName, otherCa, undefined]) {
    const r = await request(cert);
    assert.equal(r.status, 401);
    assert.equal(((await r.json()) as { error: string }).error, 'invalid_client');
  }
  assert.equal(await tokensIssued(s.h), before);
});

test('the administration API refuses tls_client_auth without exactly one subject or without a CA', async (t) => {
  const s = await setup(t);
  const admin = await apiCaller(s.h, s.realm);
  const leaf = await issuedCertificate(s.ca, 'CN=leaf');
  const base = { name: 'x', type: 'service', token_endpoint_auth_method: 'tls_client_auth' };
  const cases: [Record<string, unknown>, string][] = [
    [{ tls_client_auth_trust_anchors: [s.ca.certPem] }, 'tls_client_auth_subject_dn'],
    [
      {
        tls_client_auth_san_dns: 'a.example',
        tls_client_auth_san_uri: 'https://a.example',
        tls_client_auth_trust_anchors: [s.ca.certPem],
      },
      'tls_client_auth_subject_dn',
    ],
    [{ tls_client_auth_san_dns: 'a.example' }, 'tls_client_auth_trust_anchors'],
    [
      { tls_client_auth_san_dns: 'a.example', tls_client_auth_trust_anchors: [leaf.certPem] },
      'tls_client_auth_trust_anchors[0]',
    ],
  ];
  for (const [i, [extra, field]] of cases.entries()) {
    const r = await admin.call('POST', '/clients', { ...base, client_id: `bad-${i}`, ...extra });
    assert.equal(r.status, 422);
    const errors = ((await r.json()) as { errors: { field: string }[] }).errors;
    assert.ok(
      errors.some((e) => e.field === field),
      JSON.stringify(errors),
    );
  }
  const other = await admin.call('POST', '/clients', {
    ...base,
    client_id: 'secret-one',
    token_endpoint_auth_method: 'client_secret_basic',
    tls_client_auth_san_dns: 'a.example',
  });
  assert.equal(other.status, 422);
  const n = await s.h.ctx.db.query("select 1 from clients where realm_id = $1 and client_id like 'bad-%'", [
    s.realm.id,
  ]);
  assert.equal(n.rows.length, 0);

  // A change replaces the subject; the CA certificates stay.
  const ok = await admin.call('POST', '/clients', {
    ...base,
    client_id: 'svc',
    tls_client_auth_san_dns: 'svc.acme.example',
    tls_client_auth_trust_anchors: [s.ca.certPem],
  });
  assert.equal(ok.status, 201);
  const patched = await admin.call('PATCH', '/clients/svc', {
    tls_client_auth_san_uri: 'spiffe://acme.example/svc',
  });
  assert.equal(patched.status, 200);
  const view = (await patched.json()) as Record<string, unknown>;
  assert.equal(view.tls_client_auth_san_uri, 'spiffe://acme.example/svc');
  assert.equal(view.tls_client_auth_san_dns, undefined);
  assert.equal((view.tls_client_auth_trust_anchors as string[]).length, 1);
});

test("a public client's refresh tokens are bound to the certificate it presented", async (t) => {
  const s = await setup(t);
  const [cert, other] = await Promise.all([
    selfSignedCertificate('cli-device'),
    selfSignedCertificate('thief'),
  ]);
  await s.h.createUser(s.realm, { email: 'rt@example.com', password: PASSWORD });
  const origin = s.h.ctx.config.server.publicOrigin;
  const tx = await startHeadless(s.h, s.realm.name, CLI_CLIENT_ID, CLI_REDIRECT, {
    scope: 'openid offline_access',
    resource: [accountAudience(origin, s.realm.name)],
  });
  await tx.step('identify', { identifier: 'rt@example.com' });
  const done = await tx.step('password', { password: PASSWORD });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  const withCert = mtlsFetch(t, s.server, cert);
  const redeemed = await withCert(
    tokenUrl(s),
    form({
      grant_type: 'authorization_code',
      client_id: CLI_CLIENT_ID,
      code: codeOf(done.body.redirect_to),
      redirect_uri: CLI_REDIRECT,
      code_verifier: tx.verifier,
      resource: accountAudience(origin, s.realm.name),
    }),
  );
  assert.equal(redeemed.status, 200);
  const first = (await redeemed.json()) as { refresh_token?: string };
  assert.ok(first.refresh_token);
  const refresh = {
    grant_type: 'refresh_token',
    client_id: CLI_CLIENT_ID,
    refresh_token: first.refresh_token,
  };

  const before = await tokensIssued(s.h);
  const refusals = [
    await s.h.get(`/realms/${s.realm.name}/oauth/token`, form(refresh)),
    await mtlsFetch(t, s.server)(tokenUrl(s), form(refresh)),
    await mtlsFetch(t, s.server, other)(tokenUrl(s), form(refresh)),
  ];
  for (const r of refusals) {
    assert.equal(r.status, 400);
    assert.equal(((await r.json()) as { error: string }).error, 'invalid_grant');
  }
  assert.equal(await tokensIssued(s.h), before);

  // Nothing was spent: the same refresh token still works with the certificate.
  const ok = await withCert(tokenUrl(s), form(refresh));
  assert.equal(ok.status, 200);
  const next = (await ok.json()) as { access_token: string; refresh_token: string };
  assert.deepEqual(decodeJwt(next.access_token).cnf, { 'x5t#S256': certThumbprint(cert) });
  const fam = await s.h.ctx.db.query<{ cert_thumbprint: string | null }>(
    'select cert_thumbprint from refresh_families where realm_id = $1',
    [s.realm.id],
  );
  assert.deepEqual(
    fam.rows.map((r) => r.cert_thumbprint),
    [certThumbprint(cert)],
  );
});

test('dynamic registration takes a tls_client_auth client with its subject and CA, and refuses one without', async (t) => {
  const s = await setup(t);
  await s.h.setPolicy(s.realm, { client_registration: { enabled: true, open: true } });
  const register = (metadata: Record<string, unknown>) =>
    s.h.get(`/realms/${s.realm.name}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['https://partner.example.com/cb'],
        token_endpoint_auth_method: 'tls_client_auth',
        ...metadata,
      }),
    });
  const ok = await register({
    tls_client_auth_san_dns: 'partner.example.com',
    tls_client_auth_trust_anchors: [s.ca.certPem],
  });
  const body = (await ok.json()) as Record<string, unknown>;
  assert.equal(ok.status, 201, JSON.stringify(body));
  assert.equal(body.tls_client_auth_san_dns, 'partner.example.com');
  assert.equal(body.client_secret, undefined);
  const refused = await register({ tls_client_auth_san_dns: 'partner.example.com' });
  assert.equal(refused.status, 400);
  assert.equal(((await refused.json()) as { error: string }).error, 'invalid_client_metadata');
  const n = await s.h.ctx.db.query('select 1 from clients where realm_id = $1 and client_id like $2', [
    s.realm.id,
    'dcr-%',
  ]);
  assert.equal(n.rows.length, 1);
});
