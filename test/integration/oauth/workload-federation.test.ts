// Workload federation end to end (docs/workload-federation.md): a service client without any
// secret, a rule trusting a CI-style OpenID Connect issuer (a local server publishing its key set),
// and the RFC 7523 jwt-bearer grant driven by oauth4webapi. Every refusal is checked to issue
// nothing; the key set is fetched once per five minutes; rules are managed through the
// administration API with their value errors and audit records.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { createRemoteJWKSet, exportJWK, generateKeyPair, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { findClient } from '../../../src/clients/clients.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { seedGrant, seedResource } from '../../harness/token-kit.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const DEPLOY_API = 'https://deploy.example.com';
const MAIN_BRANCH = 'repo:acme/app:ref:refs/heads/main';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A CI system's token issuer: its key set at /.well-known/jwks, counting the fetches. */
async function ciIssuer(t: TestContext) {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'ci-1', use: 'sig', alg: 'RS256' };
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/jwks') {
      res.writeHead(404).end();
      return;
    }
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    privateKey,
    publicJwk: jwk,
    get fetches() {
      return fetches;
    },
  };
}

async function setup(t: TestContext) {
  const h = await startHarness(t, {
    publicOriginIsListener: true,
    overrides: { 'delivery.allow_private_webhooks': true },
  });
  const realm = await h.createRealm();
  const issuer = `${h.publicUrl}/realms/${realm.name}`;
  const admin = await apiCaller(h, realm);
  const ci = await ciIssuer(t);
  const created = await admin.call('POST', '/clients', {
    client_id: 'deployer',
    name: 'Deployment pipeline',
    type: 'service',
    token_endpoint_auth_method: 'none',
    grant_types: [JWT_BEARER],
  });
  assert.equal(created.status, 201);
  const createdBody = (await created.json()) as Record<string, unknown>;
  assert.equal(createdBody.client_secret, undefined, 'a workload client has no secret');
  const client = await findClient(h.ctx.db, realm.id, 'deployer');
  assert.ok(client);
  const resourceId = await seedResource(h, realm, { audience: DEPLOY_API, scopes: ['deploy'] });
  await seedGrant(h, realm, client, resourceId, { scopes: ['deploy'], subjectTypes: ['service_principal'] });
  const rule = await admin.call('POST', '/clients/deployer/workload-federations', {
    name: 'main branch of acme/app',
    issuer: ci.url,
    jwks_uri: `${ci.url}/.well-known/jwks`,
    claims: { sub: [MAIN_BRANCH], repository_owner: ['acme'] },
  });
  assert.equal(rule.status, 201);
  const ruleBody = (await rule.json()) as Record<string, unknown>;
  const as = await oauth.processDiscoveryResponse(
    new URL(issuer),
    await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oidc', ...insecure }),
  );
  const principal = await h.ctx.db.query<{ id: string }>(
    'select id from service_principals where realm_id = $1 and client_row_id = $2',
    [realm.id, client.id],
  );
  /** A CI job's token, as GitHub Actions shapes it, minted at the application's clock. */
  const ciToken = (claims: JWTPayload = {}, opts: { key?: Key; alg?: string; kid?: string } = {}) => {
    const iat = Math.floor(h.clock.now().getTime() / 1000);
    return new SignJWT({
      iss: ci.url,
      sub: MAIN_BRANCH,
      aud: issuer,
      repository: 'acme/app',
      repository_owner: 'acme',
      ref: 'refs/heads/main',
      iat,
      nbf: iat,
      exp: iat + 300,
      jti: randomUUID(),
      ...claims,
    })
      .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: opts.kid ?? 'ci-1', typ: 'JWT' })
      .sign(opts.key ?? ci.privateKey);
  };
  const grant = (assertion: string, clientId = 'deployer', extra: Record<string, string> = {}) =>
    oauth.genericTokenEndpointRequest(
      as,
      { client_id: clientId },
      oauth.None(),
      JWT_BEARER,
      { assertion, resource: DEPLOY_API, scope: 'deploy', ...extra },
      insecure,
    );
  const tokens = async (assertion: string, clientId = 'deployer') =>
    oauth.processGenericTokenEndpointResponse(as, { client_id: clientId }, await grant(assertion, clientId));
  const issuedCount = async () =>
    Number(
      (
        await h.ctx.db.query<{ n: string }>(
          `select count(*) as n from client_assertion_jtis where realm_id = $1 and client_row_id = $2`,
          [realm.id, client.id],
        )
      ).rows[0]?.n,
    );
  return {
    h,
    realm,
    issuer,
    admin,
    ci,
    client,
    as,
    ruleId: String(ruleBody.id),
    ruleBody,
    principalId: principal.rows[0]?.id,
    ciToken,
    grant,
    tokens,
    issuedCount,
  };
}

const refusedWith = (error: string) => (e: unknown) =>
  e instanceof oauth.ResponseBodyError && e.error === error;

test('case=a CI job with its OpenID Connect token gets the service token without any secret, once per token', async (t) => {
  const s = await setup(t);
  assert.ok((s.as.grant_types_supported ?? []).includes(JWT_BEARER), 'discovery names the grant');
  assert.deepEqual(
    [s.ruleBody.audience, s.ruleBody.jwks, s.ruleBody.claims],
    [s.issuer, null, { sub: [MAIN_BRANCH], repository_owner: ['acme'] }],
    'the audience defaults to the realm issuer',
  );
  const assertion = await s.ciToken();
  const got = await s.tokens(assertion);
  assert.equal(got.token_type.toLowerCase(), 'bearer');
  const realmKeys = createRemoteJWKSet(new URL(`${s.issuer}/jwks`));
  const { payload } = await jwtVerify(got.access_token, realmKeys, {
    issuer: s.issuer,
    audience: DEPLOY_API,
  });
  assert.deepEqual([payload.sub, payload.client_id, payload.scope], [s.principalId, 'deployer', 'deploy']);
  assert.equal(got.refresh_token, undefined);

  await assert.rejects(s.tokens(assertion), refusedWith('invalid_grant'), 'a used assertion is refused');
  // A second job's token is a new assertion: accepted; the key set was fetched once for both.
  await s.tokens(await s.ciToken());
  assert.equal(s.ci.fetches, 1);
  // Kept five minutes, then fetched again.
  s.h.clock.advance(5 * 60_000 + 1000);
  await s.tokens(await s.ciToken());
  assert.equal(s.ci.fetches, 2);
});

test('case=every assertion the rule does not accept is invalid_grant and issues nothing', async (t) => {
  const s = await setup(t);
  const stranger = (await generateKeyPair('RS256')).privateKey;
  const now = Math.floor(s.h.clock.now().getTime() / 1000);
  const cases: [string, Promise<string>][] = [
    ['another branch', s.ciToken({ sub: 'repo:acme/app:ref:refs/heads/feature' })],
    ['another owner', s.ciToken({ repository_owner: 'evil' })],
    ['a constrained claim missing', s.ciToken({ repository_owner: undefined })],
    ['a constrained claim of another type', s.ciToken({ repository_owner: ['acme'] })],
    ['another audience', s.ciToken({ aud: 'api://AzureADTokenExchange' })],
    ['another issuer', s.ciToken({ iss: 'https://token.actions.githubusercontent.com' })],
    ['expired', s.ciToken({ iat: now - 900, nbf: now - 900, exp: now - 600 })],
    ['not yet valid', s.ciToken({ nbf: now + 600 })],
    ['living longer than an hour', s.ciToken({ exp: now + 7200 })],
    ['without an id', s.ciToken({ jti: undefined })],
    ['signed by another key', s.ciToken({}, { key: stranger })],
    [
      'signed with a shared secret',
      s.ciToken({}, { alg: 'HS256', key: new TextEncoder().encode('x'.repeat(32)) as unknown as Key }),
    ],
    ['not a JWT', Promise.resolve('not-a-jwt')],
  ];
  for (const [label, made] of cases) {
    await assert.rejects(s.tokens(await made), refusedWith('invalid_grant'), label);
  }
  assert.equal(await s.issuedCount(), 0, 'no refused assertion was recorded or served');

  // Another service client's rules are not this one's.
  await s.admin.call('POST', '/clients', {
    client_id: 'other',
    name: 'Other',
    type: 'service',
    token_endpoint_auth_method: 'none',
    grant_types: [JWT_BEARER],
  });
  await assert.rejects(s.tokens(await s.ciToken(), 'other'), refusedWith('invalid_grant'), 'other client');

  const huge = await s.ciToken({ padding: 'x'.repeat(17 * 1024) });
  await assert.rejects(s.tokens(huge), refusedWith('invalid_request'), 'larger than 16 KiB');
  const missing = await oauth.genericTokenEndpointRequest(
    s.as,
    { client_id: 'deployer' },
    oauth.None(),
    JWT_BEARER,
    { resource: DEPLOY_API },
    insecure,
  );
  assert.equal(missing.status, 400);
  assert.equal(((await missing.json()) as { error: string }).error, 'invalid_request');
});

test('case=an inline key set; an unreachable key set answers 503; a removed rule accepts nothing', async (t) => {
  const s = await setup(t);
  // A Kubernetes cluster's service-account issuer, its keys given inline.
  const k8s = await generateKeyPair('ES256', { extractable: true });
  const inline = await s.admin.call('POST', '/clients/deployer/workload-federations', {
    name: 'cluster prod',
    issuer: 'https://kubernetes.default.svc.cluster.local',
    audience: 'proudauth',
    jwks: { keys: [{ ...(await exportJWK(k8s.publicKey)), kid: 'sa-1' }] },
    claims: { sub: ['system:serviceaccount:deploy:runner'] },
  });
  assert.equal(inline.status, 201);
  const saToken = await s.ciToken(
    {
      iss: 'https://kubernetes.default.svc.cluster.local',
      aud: ['proudauth'],
      sub: 'system:serviceaccount:deploy:runner',
    },
    { key: k8s.privateKey, alg: 'ES256', kid: 'sa-1' },
  );
  assert.ok((await s.tokens(saToken)).access_token);

  const dead = await s.admin.call('POST', '/clients/deployer/workload-federations', {
    name: 'gone',
    issuer: 'https://ci.gone.example',
    jwks_uri: 'http://127.0.0.1:9/jwks',
    claims: { sub: [MAIN_BRANCH] },
  });
  assert.equal(dead.status, 201);
  const unreachable = await s.grant(await s.ciToken({ iss: 'https://ci.gone.example' }));
  assert.equal(unreachable.status, 503);
  assert.equal(((await unreachable.json()) as { error: string }).error, 'temporarily_unavailable');

  const list = await s.admin.call('GET', '/clients/deployer/workload-federations');
  const items = ((await list.json()) as { items: { id: string; name: string }[] }).items;
  assert.deepEqual(items.map((i) => i.name).sort(), ['cluster prod', 'gone', 'main branch of acme/app']);
  const removed = await s.admin.call('DELETE', `/clients/deployer/workload-federations/${s.ruleId}`);
  assert.equal(removed.status, 204);
  assert.equal(
    (await s.admin.call('DELETE', `/clients/deployer/workload-federations/${s.ruleId}`)).status,
    404,
  );
  await assert.rejects(s.tokens(await s.ciToken()), refusedWith('invalid_grant'), 'rule removed');

  const audit = await s.h.ctx.db.query<{ type: string }>(
    `select type from audit_events where realm_id = $1 and type like 'client.workload_federation.%' order by occurred_at, id`,
    [s.realm.id],
  );
  assert.deepEqual(
    audit.rows.map((r) => r.type),
    [
      'client.workload_federation.added',
      'client.workload_federation.added',
      'client.workload_federation.added',
      'client.workload_federation.removed',
    ],
  );
});

test('case=rules are checked when added, and only service clients have them', async (t) => {
  const s = await setup(t);
  const add = async (body: unknown, client = 'deployer') => {
    const r = await s.admin.call('POST', `/clients/${client}/workload-federations`, body);
    return {
      status: r.status,
      body: (await r.json()) as { code: string; errors?: { field: string; code: string }[] },
    };
  };
  const base = {
    name: 'r',
    issuer: 'https://ci.example',
    jwks_uri: 'https://ci.example/jwks',
    claims: { sub: ['a'] },
  };
  const { publicJwk } = s.ci;
  const tooManyClaims = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`c${i}`, ['v']]));
  const cases: [string, unknown, string, string][] = [
    ['no claims', { ...base, claims: {} }, 'claims', 'too_few'],
    ['21 claims', { ...base, claims: tooManyClaims }, 'claims', 'too_many'],
    [
      '51 values',
      { ...base, claims: { sub: Array.from({ length: 51 }, (_, i) => `v${i}`) } },
      'claims.sub',
      'too_many',
    ],
    ['no values', { ...base, claims: { sub: [] } }, 'claims.sub', 'too_few'],
    ['both key sources', { ...base, jwks: { keys: [publicJwk] } }, 'jwks_uri', 'required'],
    [
      'no key source',
      { name: 'r', issuer: 'https://ci.example', claims: { sub: ['a'] } },
      'jwks_uri',
      'required',
    ],
    [
      '21 inline keys',
      { ...base, jwks_uri: undefined, jwks: { keys: Array(21).fill(publicJwk) } },
      'jwks.keys',
      'too_many',
    ],
    [
      'a private key',
      { ...base, jwks_uri: undefined, jwks: { keys: [{ ...publicJwk, d: 'AAAA' }] } },
      'jwks.keys[0]',
      'private_key',
    ],
    ['issuer not a URL', { ...base, issuer: 'ci' }, 'issuer', 'invalid_uri'],
  ];
  for (const [label, body, field, code] of cases) {
    const r = await add(body);
    assert.equal(r.status, 422, label);
    assert.equal(r.body.code, 'validation_failed', label);
    assert.ok(
      r.body.errors?.some((e) => e.field === field && e.code === code),
      `${label}: ${JSON.stringify(r.body.errors)}`,
    );
  }
  assert.equal((await add({ ...base, unknown: 1 })).status, 400);
  assert.equal((await add(base, 'nobody')).status, 404);
  const web = await s.admin.call('POST', '/clients', {
    client_id: 'site',
    name: 'Site',
    type: 'web',
    redirect_uris: ['https://site.example/cb'],
  });
  assert.equal(web.status, 201);
  assert.equal((await add(base, 'site')).status, 409);
  // Without credentials of its own a service client may use nothing but the assertion grant.
  const secretless = await s.admin.call('POST', '/clients', {
    client_id: 'cron',
    name: 'Cron',
    type: 'service',
    token_endpoint_auth_method: 'none',
    grant_types: ['client_credentials'],
  });
  assert.equal(secretless.status, 422);
});
