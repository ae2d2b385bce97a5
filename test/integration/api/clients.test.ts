// The clients administration API through HTTP: creation per client type with its refusals,
// hostile redirect URIs, reads and cursor pages, PATCH with If-Match, disable and enable (with the
// service principal), and secret rotation; secrets are checked at client authentication.
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { checkLiveness } from '../../../src/access/token-liveness.ts';
import { ACCOUNT_CLIENT_ID, CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import { authenticateClient } from '../../../src/clients/client-auth.ts';
import { JWT_BEARER_ASSERTION } from '../../../src/clients/client-auth-request.ts';
import { OAuthError } from '../../../src/kernel/oauth-error.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, type HarnessOptions, startHarness, TEST_ROOT_KEY } from '../../harness/harness.ts';
import { oauthPost } from '../../harness/token-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked member by member
type Json = Record<string, any>;

async function setup(t: TestContext, opts: HarnessOptions = {}) {
  const h = await startHarness(t, opts);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { h, realm, admin };
}

const PRODUCTION: HarnessOptions = {
  overrides: {
    environment: 'production',
    'server.public_origin': 'https://id.example.com',
    // Production refuses literal keys; a reference to the environment is accepted.
    'keys.root.1': 'env:PA_TEST_ROOT_KEY',
  },
  env: { PA_TEST_ROOT_KEY: TEST_ROOT_KEY },
};

async function send(admin: ApiCallerKit, method: string, path: string, body?: unknown, headers?: Json) {
  const res = await admin.call(method, path, body, headers);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: (text ? JSON.parse(text) : null) as Json };
}

const web = (clientId: string, extra: Json = {}) => ({
  client_id: clientId,
  name: `App ${clientId}`,
  type: 'web',
  redirect_uris: ['https://app.example.com/callback'],
  ...extra,
});

/** The (field, code) pairs of a problem's errors. */
const errorsOf = (body: Json) =>
  (body.errors as { field: string; code: string }[]).map((e) => [e.field, e.code]);

const audits = async (h: Harness, realm: RealmRow, like = '%') =>
  (
    await h.ctx.db.query<{ type: string; data: Json; target_id: string; correlation_id: string | null }>(
      `select type, data, target_id, correlation_id from audit_events where realm_id = $1 and type like $2
       order by occurred_at, id`,
      [realm.id, like],
    )
  ).rows;

const events = async (h: Harness, realm: RealmRow, like = '%') =>
  (
    await h.ctx.db.query<{ event_type: string; data: Json }>(
      `select event_type, data from outbox where realm_id = $1 and event_type like $2 order by id`,
      [realm.id, like],
    )
  ).rows;

function clientAuth(h: Harness, realm: RealmRow) {
  const issuer = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`;
  const run = (form: Record<string, string>, authorization?: string) =>
    authenticateClient(
      h.ctx.db,
      h.ctx.keyring!,
      realm.id,
      { authorization, form: new URLSearchParams(form) },
      {
        now: new Date(),
        maxTokenBytes: h.ctx.config.limits.maxTokenBytes,
        challengeRealm: realm.name,
        assertionAudiences: [issuer],
        clockSkewSeconds: 60,
      },
    );
  return {
    issuer,
    basic: (id: string, secret: string) =>
      run(
        {},
        `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      ),
    post: (id: string, secret: string) => run({ client_id: id, client_secret: secret }),
    assertion: (assertion: string) =>
      run({ client_assertion: assertion, client_assertion_type: JWT_BEARER_ASSERTION }),
  };
}

async function refusedAs(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof OAuthError) return e.error;
    throw e;
  }
  return 'accepted';
}

describe('clients api › create', () => {
  test('case=a web client gets a secret shown once, stored only as a verifier', async (t) => {
    const { h, realm, admin } = await setup(t);
    const res = await send(admin, 'POST', '/clients', web('shop', { description: 'The shop' }), {
      'x-request-id': 'req-create-1',
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('location'), `/api/v1/realms/${realm.name}/clients/shop`);
    assert.equal(res.headers.get('etag'), '"1"');
    const b = res.body;
    assert.match(b.id, /^cli_[0-9a-z]{26}$/);
    assert.deepEqual(
      [b.client_id, b.name, b.description, b.type, b.state, b.builtin],
      ['shop', 'App shop', 'The shop', 'web', 'active', false],
    );
    assert.deepEqual(b.grant_types, ['authorization_code', 'refresh_token']);
    assert.equal(b.token_endpoint_auth_method, 'client_secret_basic');
    assert.deepEqual(
      [
        b.consent_mode,
        b.token_policy,
        b.allow_remember_me,
        b.id_token_claims,
        b.require_pushed_authorization_requests,
      ],
      ['implicit', { require_mfa: false }, true, 'standard', false],
    );
    assert.deepEqual([b.jwks, b.service_principal_id, b.post_logout_redirect_uris], [null, null, []]);
    assert.match(b.client_secret, /^pa_cs_[A-Za-z0-9_-]{43}$/);
    assert.equal(b.secrets.length, 1);
    assert.equal(b.secrets[0].id, b.client_secret_id);
    assert.equal(b.secrets[0].last_used_at, null);

    const stored = await h.ctx.db.query<{ verifier: string }>(
      'select verifier from client_secrets where realm_id = $1',
      [realm.id],
    );
    assert.equal(stored.rows.length, 1);
    assert.ok(!JSON.stringify(stored.rows).includes(b.client_secret));
    const auth = clientAuth(h, realm);
    assert.equal((await auth.basic('shop', b.client_secret)).client.client_id, 'shop');

    // Records of one transaction share their time, so their order is not asserted.
    const rows = await audits(h, realm, 'client.%');
    assert.deepEqual(rows.map((r) => [r.type, r.target_id, r.correlation_id]).sort(), [
      ['client.created', b.id, 'req-create-1'],
      ['client.secret.issued', b.id, 'req-create-1'],
    ]);
    assert.ok(!JSON.stringify(rows).includes(b.client_secret));
    // Creation has no catalog event; only the security alerts of the audit signals. The
    // administrator's creation and sign-in are the setup's events, not the creation's.
    const setupEvents = ['user.created', 'user.signed_in'];
    const raised = (await events(h, realm)).filter((e) => !setupEvents.includes(e.event_type));
    assert.deepEqual(raised.map((e) => [e.event_type, e.data.event_type]).sort(), [
      ['security.alert', 'client.created'],
      ['security.alert', 'client.secret.issued'],
    ]);
  });

  test('case=a spa gets PKCE without a secret and canonical origins', async (t) => {
    const { admin } = await setup(t);
    const res = await send(admin, 'POST', '/clients', {
      client_id: 'spa',
      name: 'SPA',
      type: 'spa',
      redirect_uris: ['https://spa.example.com/cb', 'http://localhost:5173/cb'],
      post_logout_redirect_uris: ['https://spa.example.com/'],
      allowed_origins: ['https://spa.example.com/', 'http://localhost:5173'],
      consent_mode: 'required',
      token_policy: { require_mfa: true },
      allow_remember_me: false,
      id_token_claims: 'minimal',
      require_pushed_authorization_requests: true,
    });
    assert.equal(res.status, 201);
    const b = res.body;
    assert.equal(b.id_token_claims, 'minimal');
    assert.equal(b.require_pushed_authorization_requests, true);
    assert.equal(b.token_endpoint_auth_method, 'none');
    assert.equal(b.client_secret, undefined);
    assert.deepEqual(b.secrets, []);
    assert.deepEqual(b.allowed_origins, ['https://spa.example.com', 'http://localhost:5173']);
    assert.deepEqual(b.post_logout_redirect_uris, ['https://spa.example.com/']);
    assert.deepEqual(
      [b.consent_mode, b.token_policy, b.allow_remember_me],
      ['required', { require_mfa: true }, false],
    );
  });

  test('case=a service client gets an active service principal in the same transaction', async (t) => {
    const { h, realm, admin } = await setup(t);
    const res = await send(admin, 'POST', '/clients', {
      client_id: 'worker',
      name: 'Worker',
      type: 'service',
    });
    assert.equal(res.status, 201);
    const b = res.body;
    assert.deepEqual(
      [b.grant_types, b.redirect_uris, b.token_endpoint_auth_method],
      [['client_credentials'], [], 'client_secret_basic'],
    );
    assert.match(b.service_principal_id, /^spr_[0-9a-z]{26}$/);
    const sp = await h.ctx.db.query<{ id: string; client_row_id: string; state: string }>(
      'select id, client_row_id, state from service_principals where realm_id = $1',
      [realm.id],
    );
    assert.deepEqual(sp.rows, [{ id: b.service_principal_id, client_row_id: b.id, state: 'active' }]);
    assert.deepEqual(
      (await audits(h, realm))
        .map((r) => r.type)
        .filter((x) => /^(client|service_principal)\./.test(x))
        .sort(),
      ['client.created', 'client.secret.issued', 'service_principal.created'],
    );
    assert.ok(b.client_secret);
  });

  test('case=a private_key_jwt client authenticates with a key of its registered set', async (t) => {
    const { h, realm, admin } = await setup(t);
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig', alg: 'ES256' };
    const res = await send(admin, 'POST', '/clients', {
      client_id: 'signer',
      name: 'Signer',
      type: 'service',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.client_secret, undefined);
    assert.deepEqual(res.body.jwks, { keys: [jwk] });
    const auth = clientAuth(h, realm);
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({
      iss: 'signer',
      sub: 'signer',
      aud: auth.issuer,
      iat: now,
      exp: now + 60,
      jti: randomUUID(),
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .sign(privateKey);
    assert.equal((await auth.assertion(assertion)).method, 'private_key_jwt');
    // Secrets are not a private_key_jwt client's credential.
    assert.equal((await send(admin, 'POST', '/clients/signer/secrets')).status, 409);
  });

  test('case=a taken client_id, including the built-in one, is 409', async (t) => {
    const { admin } = await setup(t);
    assert.equal((await send(admin, 'POST', '/clients', web('dup'))).status, 201);
    const again = await send(admin, 'POST', '/clients', web('dup'));
    assert.deepEqual([again.status, again.body.code], [409, 'conflict']);
    assert.equal((await send(admin, 'POST', '/clients', web(CLI_CLIENT_ID))).status, 409);
  });

  test('case=bodies of the wrong shape are 400 and name the member', async (t) => {
    const { admin } = await setup(t);
    const cases: [string, unknown, [string, string]][] = [
      ['unknown member', web('a', { secret: 'x' }), ['secret', 'unknown_member']],
      ['server-owned member', web('a', { state: 'disabled' }), ['state', 'unknown_member']],
      [
        'string for a list',
        web('a', { redirect_uris: 'https://app.example.com/cb' }),
        ['redirect_uris', 'type'],
      ],
      ['number for a name', web('a', { name: 7 }), ['name', 'type']],
      [
        'unknown token_policy member',
        web('a', { token_policy: { ttl: 5 } }),
        ['token_policy.ttl', 'unknown_member'],
      ],
    ];
    for (const [label, body, error] of cases) {
      const res = await send(admin, 'POST', '/clients', body);
      assert.deepEqual([res.status, res.body.code], [400, 'invalid_request'], label);
      assert.deepEqual(errorsOf(res.body), [error], label);
    }
    const notObject = await send(admin, 'POST', '/clients', '[1]');
    assert.equal(notObject.status, 400);
  });

  test('case=values the rules refuse are 422 with field and reason', async (t) => {
    const { h, realm, admin } = await setup(t);
    // jose refuses to make a key this weak; node:crypto still does.
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    const ecPair = await generateKeyPair('ES256', { extractable: true });
    const ec = await exportJWK(ecPair.privateKey);
    const ecPublic = await exportJWK(ecPair.publicKey);
    const native = (extra: Json) => ({
      client_id: 'n',
      name: 'N',
      type: 'native',
      redirect_uris: ['com.example.app:/cb'],
      ...extra,
    });
    const pkjwt = (keys: unknown[]) =>
      web('k', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys } });
    const cases: [string, unknown, [string, string][]][] = [
      [
        'no client_id',
        { name: 'x', type: 'web', redirect_uris: ['https://a.example/cb'] },
        [['client_id', 'required']],
      ],
      ['client_id with a space', web('a b'), [['client_id', 'pattern']]],
      ['client_id too long', web('x'.repeat(129)), [['client_id', 'too_long']]],
      ['empty name', web('a', { name: '' }), [['name', 'too_short']]],
      ['name with a control character', web('a', { name: 'a\u0000b' }), [['name', 'control_character']]],
      ['unknown type', web('a', { type: 'machine' }), [['type', 'not_allowed']]],
      ['unknown consent mode', web('a', { consent_mode: 'sometimes' }), [['consent_mode', 'not_allowed']]],
      ['unknown id_token_claims', web('a', { id_token_claims: 'all' }), [['id_token_claims', 'not_allowed']]],
      [
        'spa with a secret',
        { ...web('a'), type: 'spa', token_endpoint_auth_method: 'client_secret_basic' },
        [['token_endpoint_auth_method', 'not_allowed']],
      ],
      [
        'web without authentication',
        web('a', { token_endpoint_auth_method: 'none' }),
        [['token_endpoint_auth_method', 'not_allowed']],
      ],
      [
        'unknown method',
        web('a', { token_endpoint_auth_method: 'client_secret_jwt' }),
        [['token_endpoint_auth_method', 'not_allowed']],
      ],
      [
        'service with redirect URIs',
        { client_id: 's', name: 'S', type: 'service', redirect_uris: ['https://a.example/cb'] },
        [['redirect_uris', 'not_allowed']],
      ],
      ['web without redirect URIs', web('a', { redirect_uris: [] }), [['redirect_uris', 'too_few']]],
      [
        '21 redirect URIs',
        web('a', { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a.example/cb${i}`) }),
        [['redirect_uris', 'too_many']],
      ],
      [
        'a repeated redirect URI',
        web('a', { redirect_uris: ['https://a.example/cb', 'https://a.example/cb'] }),
        [['redirect_uris[1]', 'duplicate']],
      ],
      [
        'device grant for a web client',
        web('a', { grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] }),
        [['grant_types[0]', 'not_allowed']],
      ],
      [
        'password grant',
        web('a', { grant_types: ['authorization_code', 'password'] }),
        [['grant_types[1]', 'unsupported']],
      ],
      [
        'implicit grant',
        web('a', { grant_types: ['authorization_code', 'implicit'] }),
        [['grant_types[1]', 'unsupported']],
      ],
      [
        'client credentials for a spa',
        { ...web('a'), type: 'spa', grant_types: ['authorization_code', 'client_credentials'] },
        [['grant_types[1]', 'not_allowed']],
      ],
      [
        'token exchange for a native client',
        native({ grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:token-exchange'] }),
        [['grant_types[1]', 'not_allowed']],
      ],
      [
        'authorization code for a service',
        { client_id: 's', name: 'S', type: 'service', grant_types: ['authorization_code'] },
        [['grant_types[0]', 'not_allowed']],
      ],
      [
        'refresh without code',
        web('a', { grant_types: ['refresh_token'], redirect_uris: [] }),
        [['grant_types', 'requires_authorization_code']],
      ],
      ['no grant types', web('a', { grant_types: [] }), [['grant_types', 'too_few']]],
      [
        'a repeated grant',
        web('a', { grant_types: ['authorization_code', 'authorization_code'] }),
        [['grant_types[1]', 'duplicate']],
      ],
      [
        'origins for a native client',
        native({ allowed_origins: ['https://a.example'] }),
        [['allowed_origins', 'not_allowed']],
      ],
      [
        'origin with a path',
        web('a', { allowed_origins: ['https://a.example/app'] }),
        [['allowed_origins[0]', 'path']],
      ],
      [
        'wildcard origin',
        web('a', { allowed_origins: ['https://*.a.example'] }),
        [['allowed_origins[0]', 'wildcard']],
      ],
      [
        'origin repeated after canonical form',
        web('a', { allowed_origins: ['https://a.example', 'https://a.example/'] }),
        [['allowed_origins[1]', 'duplicate']],
      ],
      [
        'bad logout URI',
        web('a', { post_logout_redirect_uris: ['https://a.example/out#x'] }),
        [['post_logout_redirect_uris[0]', 'fragment']],
      ],
      [
        'logout URIs for a service',
        { client_id: 's', name: 'S', type: 'service', post_logout_redirect_uris: ['https://a.example/'] },
        [['post_logout_redirect_uris', 'not_allowed']],
      ],
      [
        'private_key_jwt without keys',
        web('a', { token_endpoint_auth_method: 'private_key_jwt' }),
        [['jwks', 'required']],
      ],
      ['keys for a secret client', web('a', { jwks: { keys: [] } }), [['jwks', 'not_allowed']]],
      ['an empty key set', pkjwt([]), [['jwks.keys', 'too_few']]],
      ['a private key', pkjwt([ec]), [['jwks.keys[0]', 'private_key']]],
      ['a symmetric key', pkjwt([{ kty: 'oct', k: 'c2VjcmV0' }]), [['jwks.keys[0]', 'private_key']]],
      ['a 1024-bit RSA key', pkjwt([rsa1024]), [['jwks.keys[0]', 'weak_key']]],
      [
        'an HMAC algorithm',
        pkjwt([{ ...rsa1024, alg: 'HS256' }]),
        [['jwks.keys[0]', 'unsupported_algorithm']],
      ],
      ['an encryption key', pkjwt([{ ...rsa1024, use: 'enc' }]), [['jwks.keys[0]', 'not_signing_key']]],
      [
        'a P-384 key',
        pkjwt([{ kty: 'EC', crv: 'P-384', x: 'AA', y: 'AA' }]),
        [['jwks.keys[0]', 'unsupported_key']],
      ],
      [
        'a NUL in a key member',
        pkjwt([{ ...ecPublic, kid: 'a\u0000b' }]),
        [['jwks.keys[0]', 'control_character']],
      ],
      [
        'a NUL in a member name',
        pkjwt([{ ...ecPublic, 'x\u0000': 1 }]),
        [['jwks.keys[0]', 'control_character']],
      ],
      [
        'a broken key',
        pkjwt([{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }]),
        [['jwks.keys[0]', 'invalid_key']],
      ],
    ];
    for (const [label, body, expected] of cases) {
      const res = await send(admin, 'POST', '/clients', body);
      assert.deepEqual([res.status, res.body.code], [422, 'validation_failed'], label);
      assert.deepEqual(errorsOf(res.body), expected, label);
    }
    // Nothing refused left a row behind: only the two built-in clients are there.
    const n = await h.ctx.db.query<{ n: number }>(
      'select count(*)::int as n from clients where realm_id = $1',
      [realm.id],
    );
    assert.equal(n.rows[0]!.n, 2);
  });

  test('case=every rule broken at once is reported in one answer', async (t) => {
    const { admin } = await setup(t);
    const res = await send(admin, 'POST', '/clients', {
      client_id: 'multi',
      name: 'Multi',
      type: 'spa',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: ['https://a.example/cb', 'http://a.example/cb'],
      allowed_origins: ['ftp://a.example'],
    });
    assert.equal(res.status, 422);
    assert.deepEqual(errorsOf(res.body), [
      ['token_endpoint_auth_method', 'not_allowed'],
      ['redirect_uris[1]', 'http_not_allowed'],
      ['allowed_origins[0]', 'scheme_not_allowed'],
    ]);
  });

  test('case=a caller without realm.clients.write is refused', async (t) => {
    const { h, realm } = await setup(t);
    const reader = await apiCaller(h, realm, { roles: ['resource-server'] });
    for (const [method, path, body] of [
      ['POST', '/clients', web('x')],
      ['GET', '/clients', undefined],
      ['GET', `/clients/${CLI_CLIENT_ID}`, undefined],
    ] as const) {
      const res = await send(reader, method, path, body);
      assert.deepEqual([res.status, res.body.code], [403, 'forbidden'], `${method} ${path}`);
    }
    assert.equal((await h.get(`/api/v1/realms/${realm.name}/clients`)).status, 401);
  });
});

describe('clients api › hostile redirect URIs', () => {
  // [uri, client type, expected reason or 'ok'] (spec doc 1, RedirectURI row; decisions D1-D2).
  const DEVELOPMENT: [string, string, string][] = [
    ['https://app.example.com/a/%2e%2e/b', 'web', 'encoded_separator'],
    ['https://app.example.com/a/%2E%2E/b', 'web', 'encoded_separator'],
    ['https://app.example.com/a/.%2e/b', 'web', 'encoded_separator'],
    ['https://app.example.com/a%2fb', 'web', 'encoded_separator'],
    ['https://app.example.com/a%5Cb', 'web', 'encoded_separator'],
    ['https://app.example.com/a/%252e%252e/b', 'web', 'encoded_separator'],
    ['https://app.example.com/a/%25252f', 'web', 'encoded_separator'],
    ['https://app.example.com/a/../b', 'web', 'dot_segment'],
    ['https://app.example.com/a/./b', 'web', 'dot_segment'],
    ['https://app.example.com/cb#section', 'web', 'fragment'],
    ['https://app.example.com/cb#', 'web', 'fragment'],
    ['https://user@app.example.com/cb', 'web', 'userinfo'],
    ['https://user:pass@app.example.com/cb', 'web', 'userinfo'],
    ['https://app.example.com@evil.example/cb', 'web', 'userinfo'],
    ['https://*.example.com/cb', 'web', 'wildcard'],
    ['https://app.example.com/*', 'web', 'wildcard'],
    ['https://app.example.com\\@evil.example/cb', 'web', 'backslash'],
    ['https://app.example.com/c b', 'web', 'whitespace'],
    [' https://app.example.com/cb', 'web', 'whitespace'],
    ['https://app.example.com/cb\t', 'web', 'whitespace'],
    ['https://app.example.com/cb\n', 'web', 'whitespace'],
    ['https://app.example.com/cb\u00a0', 'web', 'whitespace'],
    ['https://app.example.com/cb\u200b', 'web', 'control_character'],
    ['https://app.example.com/caf\u00e9', 'web', 'non_ascii'],
    ['https://app.example.com/cb%zz', 'web', 'invalid_percent_encoding'],
    ['http://app.example.com/cb', 'web', 'http_not_allowed'],
    ['http://app.example.com/cb', 'native', 'http_not_allowed'],
    ['http://127.0.0.1/cb', 'web', 'http_not_allowed'],
    ['http://127.0.0.1:8080/cb', 'native', 'ok'],
    ['http://[::1]/cb', 'native', 'ok'],
    ['http://localhost:3000/cb', 'web', 'ok'],
    ['com.example.app:/oauth/cb', 'native', 'ok'],
    ['com.example.app:/oauth/cb', 'web', 'scheme_not_allowed'],
    ['com.example.app:/oauth/cb', 'spa', 'scheme_not_allowed'],
    ['myapp:/cb', 'native', 'scheme_not_allowed'],
    ['javascript:alert(1)', 'web', 'scheme_not_allowed'],
    ['file:///etc/passwd', 'native', 'scheme_not_allowed'],
    ['/relative/cb', 'web', 'not_absolute'],
    ['https:app.example.com/cb', 'web', 'https_needs_host'],
    ['https://app.example.com:99999/cb', 'web', 'invalid_port'],
    ['HTTPS://app.example.com/cb', 'web', 'not_canonical'],
    ['https://APP.example.com/cb', 'web', 'not_canonical'],
    [`https://app.example.com/${'a'.repeat(2030)}`, 'web', 'too_long'],
    ['https://app.example.com/cb?next=%2Fhome', 'web', 'ok'],
    ['https://app.example.com', 'web', 'ok'],
  ];

  const body = (uri: string, type: string, i: number) => ({
    client_id: `c${i}`,
    name: 'Redirect test',
    type,
    redirect_uris: [uri],
  });

  test('case=each hostile URI is refused with its reason, acceptable ones are stored exactly', async (t) => {
    const { admin } = await setup(t);
    for (const [i, [uri, type, expected]] of DEVELOPMENT.entries()) {
      const res = await send(admin, 'POST', '/clients', body(uri, type, i));
      const label = `${JSON.stringify(uri)} as ${type}`;
      if (expected === 'ok') {
        assert.equal(res.status, 201, `${label}: ${res.text}`);
        assert.deepEqual(res.body.redirect_uris, [uri], label);
      } else {
        assert.equal(res.status, 422, label);
        assert.deepEqual(errorsOf(res.body), [['redirect_uris[0]', expected]], label);
      }
    }
  });

  test('case=PATCH and logout URIs get the same checks', async (t) => {
    const { admin } = await setup(t);
    assert.equal((await send(admin, 'POST', '/clients', web('p'))).status, 201);
    for (const [uri, , expected] of DEVELOPMENT.filter(([, type, e]) => type === 'web' && e !== 'ok')) {
      const res = await send(admin, 'PATCH', '/clients/p', { redirect_uris: ['https://ok.example/cb', uri] });
      assert.deepEqual(errorsOf(res.body), [['redirect_uris[1]', expected]], uri);
      const out = await send(admin, 'PATCH', '/clients/p', { post_logout_redirect_uris: [uri] });
      assert.deepEqual(errorsOf(out.body), [['post_logout_redirect_uris[0]', expected]], uri);
    }
  });

  test('case=production refuses loopback and localhost except http loopback IPs for native apps', async (t) => {
    const { h, admin } = await setup(t, PRODUCTION);
    assert.equal(h.ctx.config.environment, 'production');
    const cases: [string, string, string][] = [
      ['http://localhost:3000/cb', 'web', 'loopback_in_production'],
      ['https://localhost/cb', 'web', 'loopback_in_production'],
      ['https://app.localhost/cb', 'web', 'loopback_in_production'],
      ['https://127.0.0.1/cb', 'web', 'loopback_in_production'],
      ['https://127.1/cb', 'web', 'loopback_in_production'],
      ['https://2130706433/cb', 'web', 'loopback_in_production'],
      ['https://[::ffff:127.0.0.1]/cb', 'web', 'loopback_in_production'],
      ['https://[::1]/cb', 'native', 'loopback_in_production'],
      ['http://localhost:8080/cb', 'native', 'loopback_in_production'],
      ['http://127.0.0.1:8080/cb', 'native', 'ok'],
      ['http://[::1]/cb', 'native', 'ok'],
      ['https://app.example.com/cb', 'web', 'ok'],
    ];
    for (const [i, [uri, type, expected]] of cases.entries()) {
      const res = await send(admin, 'POST', '/clients', body(uri, type, i));
      if (expected === 'ok') assert.equal(res.status, 201, uri);
      else assert.deepEqual([res.status, errorsOf(res.body)], [422, [['redirect_uris[0]', expected]]], uri);
    }
  });
});

describe('clients api › read', () => {
  test('case=one client with secret metadata and never a secret or verifier', async (t) => {
    const { h, realm, admin } = await setup(t);
    const created = (await send(admin, 'POST', '/clients', web('reader'))).body;
    const res = await send(admin, 'GET', '/clients/reader');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('etag'), '"1"');
    const { client_secret, client_secret_id, ...shown } = created;
    assert.deepEqual(res.body, shown);
    assert.deepEqual(Object.keys(res.body.secrets[0]).sort(), [
      'created_at',
      'expires_at',
      'id',
      'last_used_at',
    ]);
    const verifier = (
      await h.ctx.db.query<{ verifier: string }>('select verifier from client_secrets where realm_id = $1', [
        realm.id,
      ])
    ).rows[0]!.verifier;
    assert.ok(!res.text.includes(client_secret));
    assert.ok(!res.text.includes(verifier));
    const builtin = await send(admin, 'GET', `/clients/${CLI_CLIENT_ID}`);
    assert.deepEqual([builtin.body.builtin, builtin.body.type, builtin.body.secrets], [true, 'native', []]);
  });

  test('case=unknown clients, other realms and impossible ids are 404', async (t) => {
    const { h, admin } = await setup(t);
    const other = await h.createRealm();
    const otherAdmin = await apiCaller(h, other);
    assert.equal((await send(otherAdmin, 'POST', '/clients', web('theirs'))).status, 201);
    for (const path of [
      '/clients/theirs',
      '/clients/nobody',
      '/clients/a%00b',
      '/clients/%C3%A9',
      `/clients/${'x'.repeat(129)}`,
    ]) {
      const res = await send(admin, 'GET', path);
      assert.deepEqual([res.status, res.body.code], [404, 'not_found'], path);
    }
    for (const path of ['/clients/theirs/disable', '/clients/theirs/secrets']) {
      assert.equal((await send(admin, 'POST', path)).status, 404, path);
    }
    assert.equal((await send(admin, 'PATCH', '/clients/theirs', { name: 'mine' })).status, 404);
  });

  test('case=client ids with reserved characters are addressed percent-encoded', async (t) => {
    const { admin } = await setup(t);
    assert.equal((await send(admin, 'POST', '/clients', web('team/app:1?x'))).status, 201);
    const res = await send(admin, 'GET', `/clients/${encodeURIComponent('team/app:1?x')}`);
    assert.deepEqual([res.status, res.body.client_id], [200, 'team/app:1?x']);
  });

  test('case=the list pages with keyset cursors in creation order', async (t) => {
    const { h, admin } = await setup(t);
    const made = [CLI_CLIENT_ID, ACCOUNT_CLIENT_ID];
    for (const id of ['a1', 'a2', 'a3', 'a4']) {
      assert.equal((await send(admin, 'POST', '/clients', web(id))).status, 201);
      made.push(id);
    }
    assert.equal(
      (await send(admin, 'POST', '/clients', { client_id: 'svc', name: 'S', type: 'service' })).status,
      201,
    );
    made.push('svc');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const res = await send(admin, 'GET', `/clients${q}`);
      assert.equal(res.status, 200);
      assert.ok(res.body.items.length <= 2);
      for (const item of res.body.items) {
        assert.equal(item.client_secret, undefined);
        seen.push(item.client_id);
      }
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    assert.deepEqual(seen, made);
    assert.equal(pages, 4);

    const all = await send(admin, 'GET', '/clients');
    assert.deepEqual([all.body.items.length, all.body.next_cursor], [7, null]);
    assert.equal(all.body.items.find((c: Json) => c.client_id === 'a1').secrets.length, 1);
    const huge = await send(admin, 'GET', '/clients?limit=100000');
    assert.deepEqual([huge.status, huge.body.items.length], [200, 7]);
    assert.ok(h.ctx.config.limits.maxPageSize < 100000);

    const services = await send(admin, 'GET', '/clients?type=service');
    assert.deepEqual(
      services.body.items.map((c: Json) => c.client_id),
      ['svc'],
    );
    const webPage = await send(admin, 'GET', '/clients?type=web&limit=1');
    const next = webPage.body.next_cursor as string;
    assert.equal(
      (await send(admin, 'GET', `/clients?type=web&limit=1&cursor=${next}`)).body.items[0].client_id,
      'a2',
    );
    // A cursor is bound to its filters and realm.
    const refused = [
      `/clients?type=spa&cursor=${next}`,
      `/clients?cursor=${next}`,
      '/clients?cursor=not-a-cursor',
      `/clients?cursor=${Buffer.from('{"v":1}').toString('base64url')}`,
      '/clients?limit=0',
      '/clients?limit=-1',
      '/clients?limit=abc',
      '/clients?type=robot',
      '/clients?sort=name',
      '/clients?limit=1&limit=2',
    ];
    for (const path of refused) {
      const res = await send(admin, 'GET', path);
      assert.deepEqual([res.status, res.body.code], [400, 'invalid_request'], path);
    }
    const other = await h.createRealm();
    const otherAdmin = await apiCaller(h, other);
    const res = await send(otherAdmin, 'GET', `/clients?type=web&cursor=${next}`);
    assert.equal(res.status, 400);
  });
});

describe('clients api › update', () => {
  test('case=members given replace the stored ones; the version and audit follow', async (t) => {
    const { h, realm, admin } = await setup(t);
    const created = (await send(admin, 'POST', '/clients', web('upd', { description: 'old' }))).body;
    const res = await send(
      admin,
      'PATCH',
      '/clients/upd',
      {
        name: 'Renamed',
        description: null,
        redirect_uris: ['https://app.example.com/new'],
        allowed_origins: ['https://app.example.com/'],
        token_policy: { require_mfa: true },
        consent_mode: 'required',
        id_token_claims: 'minimal',
        client_id: 'upd',
        type: 'web',
      },
      { 'if-match': '"1"' },
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('etag'), '"2"');
    const b = res.body;
    assert.deepEqual(
      [b.name, b.description, b.redirect_uris, b.allowed_origins, b.token_policy, b.consent_mode],
      [
        'Renamed',
        null,
        ['https://app.example.com/new'],
        ['https://app.example.com'],
        { require_mfa: true },
        'required',
      ],
    );
    assert.equal(b.id_token_claims, 'minimal');
    // Untouched members keep their values.
    assert.deepEqual(
      [b.grant_types, b.allow_remember_me, b.secrets],
      [created.grant_types, true, created.secrets],
    );
    const updated = (await audits(h, realm, 'client.updated'))[0]!;
    assert.deepEqual(updated.data.members.sort(), [
      'allowed_origins',
      'consent_mode',
      'description',
      'id_token_claims',
      'name',
      'redirect_uris',
      'token_policy',
    ]);
    assert.equal(updated.data.version, 2);
    // The same values again change nothing: no new version, no new audit record.
    const same = await send(admin, 'PATCH', '/clients/upd', { name: 'Renamed' });
    assert.deepEqual([same.status, same.headers.get('etag')], [200, '"2"']);
    assert.equal((await audits(h, realm, 'client.updated')).length, 1);
    assert.equal((await events(h, realm, 'client.%')).length, 0);
  });

  test('case=a stale If-Match is 412 and changes nothing', async (t) => {
    const { admin } = await setup(t);
    await send(admin, 'POST', '/clients', web('etag'));
    assert.equal(
      (await send(admin, 'PATCH', '/clients/etag', { name: 'One' }, { 'if-match': '"1"' })).status,
      200,
    );
    const stale = await send(admin, 'PATCH', '/clients/etag', { name: 'Two' }, { 'if-match': '"1"' });
    assert.deepEqual([stale.status, stale.body.code], [412, 'precondition_failed']);
    assert.equal(
      (await send(admin, 'PATCH', '/clients/etag', { name: 'Two' }, { 'if-match': 'W/"2"' })).status,
      412,
    );
    assert.equal((await send(admin, 'GET', '/clients/etag')).body.name, 'One');
    assert.equal(
      (await send(admin, 'PATCH', '/clients/etag', { name: 'Two' }, { 'if-match': '"7", "2"' })).status,
      200,
    );
    assert.equal(
      (await send(admin, 'PATCH', '/clients/etag', { name: 'Three' }, { 'if-match': '*' })).status,
      200,
    );
  });

  test('case=immutable members, rule breaks and built-in clients are refused', async (t) => {
    const { h, realm, admin } = await setup(t);
    await send(admin, 'POST', '/clients', web('imm'));
    const cases: [unknown, [string, string][]][] = [
      [{ client_id: 'other' }, [['client_id', 'immutable']]],
      [{ type: 'spa' }, [['type', 'immutable']]],
      [{ token_endpoint_auth_method: 'client_secret_post' }, [['token_endpoint_auth_method', 'immutable']]],
      // Without the authorization_code grant the stored redirect URIs have no use.
      [
        { grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'] },
        [['redirect_uris', 'not_allowed']],
      ],
      [{ redirect_uris: [] }, [['redirect_uris', 'too_few']]],
      [{ jwks: { keys: [] } }, [['jwks', 'not_allowed']]],
      [{ grant_types: ['client_credentials'] }, [['grant_types[0]', 'not_allowed']]],
    ];
    for (const [body, expected] of cases) {
      const res = await send(admin, 'PATCH', '/clients/imm', body);
      assert.deepEqual([res.status, errorsOf(res.body)], [422, expected], JSON.stringify(body));
    }
    const unknown = await send(admin, 'PATCH', '/clients/imm', { state: 'disabled' });
    assert.deepEqual([unknown.status, errorsOf(unknown.body)], [400, [['state', 'unknown_member']]]);
    const dropped = await send(admin, 'PATCH', '/clients/imm', {
      grant_types: ['urn:ietf:params:oauth:grant-type:token-exchange'],
      redirect_uris: [],
    });
    assert.deepEqual(
      [dropped.status, dropped.body.grant_types],
      [200, ['urn:ietf:params:oauth:grant-type:token-exchange']],
    );

    const builtin = await send(admin, 'PATCH', `/clients/${CLI_CLIENT_ID}`, { name: 'Mine now' });
    assert.deepEqual([builtin.status, builtin.body.code], [409, 'conflict']);
    const row = await h.ctx.db.query<{ name: string }>(
      'select name from clients where realm_id = $1 and client_id = $2',
      [realm.id, CLI_CLIENT_ID],
    );
    assert.equal(row.rows[0]!.name, 'ProudAuth command line');
  });

  test('case=a private_key_jwt client rotates its key set', async (t) => {
    const { admin } = await setup(t);
    const key = async () => ({
      ...(await exportJWK((await generateKeyPair('EdDSA', { extractable: true })).publicKey)),
      kid: randomUUID(),
    });
    const first = await key();
    const body = {
      client_id: 'kj',
      name: 'KJ',
      type: 'service',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [first] },
    };
    assert.equal((await send(admin, 'POST', '/clients', body)).status, 201);
    const second = await key();
    const res = await send(admin, 'PATCH', '/clients/kj', { jwks: { keys: [first, second] } });
    assert.deepEqual([res.status, res.body.jwks.keys.length], [200, 2]);
    const dupKid = await send(admin, 'PATCH', '/clients/kj', {
      jwks: { keys: [first, { ...second, kid: first.kid }] },
    });
    assert.deepEqual(errorsOf(dupKid.body), [['jwks.keys[1].kid', 'duplicate']]);
  });
});

describe('clients api › disable and enable', () => {
  test('case=a disabled client stops authenticating; enabling restores it; events and audits', async (t) => {
    const { h, realm, admin } = await setup(t);
    const created = (await send(admin, 'POST', '/clients', web('toggle'))).body;
    const auth = clientAuth(h, realm);
    const off = await send(admin, 'POST', '/clients/toggle/disable', undefined, {
      'x-request-id': 'req-off',
    });
    assert.deepEqual([off.status, off.body.state, off.headers.get('etag')], [200, 'disabled', '"2"']);
    assert.equal(await refusedAs(auth.basic('toggle', created.client_secret)), 'invalid_client');
    const stateEvents = async () => (await events(h, realm, 'client.%')).map((e) => e.data);
    const stateAudits = async () =>
      (await audits(h, realm, 'client.state_changed')).map((r) => [
        r.data.state,
        r.data.previous_state,
        r.target_id,
        r.correlation_id,
      ]);
    assert.deepEqual(await stateEvents(), [{ client_ref: 'toggle', state: 'suspended' }]);
    assert.deepEqual(await stateAudits(), [['disabled', 'active', created.id, 'req-off']]);
    // Disabling again changes nothing and records nothing.
    assert.equal((await send(admin, 'POST', '/clients/toggle/disable')).body.state, 'disabled');
    assert.equal((await stateEvents()).length, 1);
    const on = await send(admin, 'POST', '/clients/toggle/enable', undefined, { 'x-request-id': 'req-on' });
    assert.deepEqual([on.status, on.body.state], [200, 'active']);
    assert.equal((await auth.basic('toggle', created.client_secret)).client.client_id, 'toggle');
    const byState = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    assert.deepEqual((await stateAudits()).sort(byState), [
      ['active', 'disabled', created.id, 'req-on'],
      ['disabled', 'active', created.id, 'req-off'],
    ]);
    assert.deepEqual((await stateEvents()).map((d) => d.state).sort(), ['active', 'suspended']);
  });

  test('case=disabling a service client disables its principal and its tokens', async (t) => {
    const { h, realm, admin } = await setup(t);
    const svc = (
      await send(admin, 'POST', '/clients', { client_id: 'robot', name: 'Robot', type: 'service' })
    ).body;
    const live = async () =>
      (
        await checkLiveness(
          h.ctx.db,
          {
            realmId: realm.id,
            subject: svc.service_principal_id,
            clientId: 'robot',
            tokenId: randomUUID(),
            issuedAt: Math.floor(Date.now() / 1000),
            sessionId: null,
            audience: 'https://api.example.com',
            resourceId: 'builtin:admin',
            exchanged: false,
          },
          new Date(),
        )
      ).active;
    const state = async () =>
      (
        await h.ctx.db.query<{ state: string }>(
          'select state from service_principals where realm_id = $1 and id = $2',
          [realm.id, svc.service_principal_id],
        )
      ).rows[0]!.state;
    assert.equal(await live(), true);
    assert.equal((await send(admin, 'POST', '/clients/robot/disable')).status, 200);
    assert.equal(await state(), 'disabled');
    assert.equal(await live(), false);
    assert.deepEqual(
      (await events(h, realm, 'service_principal.%')).map((e) => e.data),
      [{ service_principal_id: svc.service_principal_id, state: 'disabled' }],
    );
    // The principal alone keeps its tokens dead even if the client row were active again.
    await h.ctx.db.query(`update clients set state = 'active' where realm_id = $1 and client_id = 'robot'`, [
      realm.id,
    ]);
    assert.equal(await live(), false);
    await h.ctx.db.query(
      `update clients set state = 'disabled' where realm_id = $1 and client_id = 'robot'`,
      [realm.id],
    );
    assert.equal((await send(admin, 'POST', '/clients/robot/enable')).status, 200);
    assert.equal(await state(), 'active');
    assert.equal(await live(), true);
    assert.deepEqual((await events(h, realm, 'service_principal.%')).map((e) => e.data.state).sort(), [
      'active',
      'disabled',
    ]);
    assert.deepEqual(
      (await audits(h, realm, 'service_principal.state_changed')).map((r) => r.data.state).sort(),
      ['active', 'disabled'],
    );
  });

  test('case=built-in and unknown clients cannot be disabled', async (t) => {
    const { admin } = await setup(t);
    const builtin = await send(admin, 'POST', `/clients/${CLI_CLIENT_ID}/disable`);
    assert.deepEqual([builtin.status, builtin.body.code], [409, 'conflict']);
    assert.equal((await send(admin, 'GET', `/clients/${CLI_CLIENT_ID}`)).body.state, 'active');
    assert.equal((await send(admin, 'POST', '/clients/ghost/enable')).status, 404);
  });
});

describe('clients api › secrets', () => {
  test('case=rotation issues up to three, revocation ends a secret at once', async (t) => {
    const { h, realm, admin } = await setup(t);
    const created = (
      await send(admin, 'POST', '/clients', web('rot', { token_endpoint_auth_method: 'client_secret_post' }))
    ).body;
    const auth = clientAuth(h, realm);
    const second = await send(admin, 'POST', '/clients/rot/secrets');
    assert.equal(second.status, 201);
    assert.equal(second.headers.get('cache-control'), 'no-store');
    assert.match(second.body.client_secret, /^pa_cs_/);
    assert.match(second.body.id, /^csk_/);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const third = await send(admin, 'POST', '/clients/rot/secrets', { expires_at: expiresAt });
    assert.deepEqual([third.status, third.body.expires_at], [201, expiresAt]);
    const fourth = await send(admin, 'POST', '/clients/rot/secrets');
    assert.deepEqual([fourth.status, fourth.body.code], [409, 'conflict']);

    const list = await send(admin, 'GET', '/clients/rot/secrets');
    assert.deepEqual(
      list.body.items.map((s: Json) => s.id),
      [created.client_secret_id, second.body.id, third.body.id],
    );
    assert.ok(!list.text.includes('pa_cs_'));

    for (const s of [created.client_secret, second.body.client_secret, third.body.client_secret]) {
      assert.equal((await auth.post('rot', s)).client.client_id, 'rot');
    }
    const del = await admin.call('DELETE', `/clients/rot/secrets/${created.client_secret_id}`);
    assert.equal(del.status, 204);
    assert.equal(await refusedAs(auth.post('rot', created.client_secret)), 'invalid_client');
    assert.equal((await auth.post('rot', second.body.client_secret)).client.client_id, 'rot');
    // Revoking frees a place, and revoking again is still 204.
    assert.equal((await send(admin, 'POST', '/clients/rot/secrets')).status, 201);
    assert.equal(
      (await admin.call('DELETE', `/clients/rot/secrets/${created.client_secret_id}`)).status,
      204,
    );
    assert.equal((await send(admin, 'GET', '/clients/rot/secrets')).body.items.length, 3);
    assert.equal((await send(admin, 'GET', '/clients/rot')).body.secrets.length, 3);

    assert.deepEqual((await audits(h, realm, 'client.secret.%')).map((r) => r.type).sort(), [
      'client.secret.issued',
      'client.secret.issued',
      'client.secret.issued',
      'client.secret.issued',
      'client.secret.revoked',
    ]);
  });

  test('case=machine.client_secret_max_lifetime_days caps every new secret; an expired one fails client authentication', async (t) => {
    const { h, realm, admin } = await setup(t);
    const put = await send(admin, 'PUT', '/settings', {
      policy: { machine: { client_secret_max_lifetime_days: 30 } },
    });
    assert.equal(put.status, 200, put.text);
    const DAY = 86_400_000;
    /** The expiry is the longest allowed: 30 days after the request (the harness clock runs). */
    const isLongest = (before: number, at: string) => {
      const expires = new Date(at).getTime();
      assert.ok(expires >= before + 30 * DAY && expires <= h.clock.now().getTime() + 30 * DAY, at);
    };
    let before = h.clock.now().getTime();
    const created = await send(admin, 'POST', '/clients', {
      client_id: 'svc',
      name: 'Service',
      type: 'service',
    });
    assert.equal(created.status, 201, created.text);
    isLongest(before, created.body.secrets[0].expires_at);
    before = h.clock.now().getTime();
    const rotated = await send(admin, 'POST', '/clients/svc/secrets');
    isLongest(before, rotated.body.expires_at);
    const shorter = new Date(h.clock.now().getTime() + 5 * DAY).toISOString();
    assert.equal(
      (await send(admin, 'POST', '/clients/svc/secrets', { expires_at: shorter })).body.expires_at,
      shorter,
    );
    const longer = new Date(h.clock.now().getTime() + 31 * DAY).toISOString();
    const refused = await send(admin, 'POST', '/clients/svc/secrets', { expires_at: longer });
    assert.deepEqual([refused.status, errorsOf(refused.body)], [422, [['expires_at', 'too_large']]]);

    const grant = { grant_type: 'client_credentials' };
    const creds = { clientId: 'svc', secret: created.body.client_secret as string };
    assert.notEqual((await oauthPost(h, realm, 'token', grant, creds)).status, 401);
    h.clock.advance(30 * DAY + 1000);
    const expired = await oauthPost(h, realm, 'token', grant, creds);
    assert.deepEqual([expired.status, expired.body.error], [401, 'invalid_client']);
  });

  test('case=secret refusals', async (t) => {
    const { admin } = await setup(t);
    await send(admin, 'POST', '/clients', web('sec'));
    await send(admin, 'POST', '/clients', { ...web('pub'), type: 'spa' });
    const cases: [string, string, unknown, number, string][] = [
      ['POST', '/clients/pub/secrets', undefined, 409, 'conflict'],
      ['GET', '/clients/pub/secrets', undefined, 409, 'conflict'],
      ['DELETE', '/clients/pub/secrets/csk_00000000000000000000000000', undefined, 409, 'conflict'],
      ['POST', `/clients/${CLI_CLIENT_ID}/secrets`, undefined, 409, 'conflict'],
      ['POST', '/clients/ghost/secrets', undefined, 404, 'not_found'],
      ['DELETE', '/clients/sec/secrets/csk_00000000000000000000000000', undefined, 404, 'not_found'],
      ['DELETE', '/clients/sec/secrets/not-a-secret-id', undefined, 404, 'not_found'],
      ['POST', '/clients/sec/secrets', { expires_at: '2000-01-01T00:00:00Z' }, 422, 'validation_failed'],
      ['POST', '/clients/sec/secrets', { expires_at: 'tomorrow' }, 422, 'validation_failed'],
      ['POST', '/clients/sec/secrets', { expires_at: 5 }, 400, 'invalid_request'],
      ['POST', '/clients/sec/secrets', { rotate: true }, 400, 'invalid_request'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const res = await send(admin, method, path, body);
      assert.deepEqual(
        [res.status, res.body.code],
        [status, code],
        `${method} ${path} ${JSON.stringify(body)}`,
      );
    }
    // A secret of another client of the realm cannot be revoked through this one.
    const sec = (await send(admin, 'GET', '/clients/sec/secrets')).body.items[0].id;
    await send(admin, 'POST', '/clients', web('sec2'));
    assert.equal((await admin.call('DELETE', `/clients/sec2/secrets/${sec}`)).status, 404);
    assert.equal((await send(admin, 'GET', '/clients/sec/secrets')).body.items.length, 1);
  });
});
