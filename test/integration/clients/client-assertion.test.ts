// private_key_jwt against the test database: a signed assertion from a key of the client's
// registered key set authenticates once; every other shape fails as invalid_client.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { deleteExpiredAssertionJtis } from '../../../src/clients/client-auth.repo.ts';
import { authenticateClient } from '../../../src/clients/client-auth.ts';
import { JWT_BEARER_ASSERTION } from '../../../src/clients/client-auth-request.ts';
import { OAuthError, oauthErrorBody } from '../../../src/kernel/oauth-error.ts';
import { startHarness } from '../../harness/harness.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';

type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const issuer = `${h.publicUrl}/realms/${realm.name}`;
  const tokenUrl = `${issuer}/oauth/token`;
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig' };
  const client = await h.createClient(realm, {
    clientId: 'jwt-app',
    name: 'JWT app',
    type: 'service',
    redirectUris: [],
    tokenEndpointAuthMethod: 'private_key_jwt',
  });
  await h.ctx.db.query('update clients set jwks = $3 where realm_id = $1 and id = $2', [
    realm.id,
    client.id,
    JSON.stringify({ keys: [jwk] }),
  ]);
  const sign = (
    claims: JWTPayload = {},
    opts: { key?: Key; alg?: string; kid?: string; now?: Date } = {},
  ) => {
    const iat = Math.floor((opts.now ?? new Date()).getTime() / 1000);
    const payload = {
      iss: 'jwt-app',
      sub: 'jwt-app',
      aud: tokenUrl,
      iat,
      exp: iat + 60,
      jti: randomUUID(),
      ...claims,
    };
    return new SignJWT(payload)
      .setProtectedHeader({ alg: opts.alg ?? 'ES256', kid: opts.kid ?? 'k1' })
      .sign(opts.key ?? privateKey);
  };
  const auth = (assertion: string, form: Record<string, string> = {}, now = new Date()) =>
    authenticateClient(
      h.ctx.db,
      h.ctx.keyring!,
      realm.id,
      {
        authorization: undefined,
        form: new URLSearchParams({
          client_assertion: assertion,
          client_assertion_type: JWT_BEARER_ASSERTION,
          ...form,
        }),
      },
      {
        now,
        maxTokenBytes: h.ctx.config.limits.maxTokenBytes,
        challengeRealm: realm.name,
        assertionAudiences: [issuer, tokenUrl],
        clockSkewSeconds: 60,
      },
    );
  return { h, realm, client, sign, auth, issuer, tokenUrl };
}

async function refusal(p: Promise<unknown>, label = '') {
  try {
    await p;
  } catch (e) {
    if (e instanceof OAuthError)
      return { status: e.status, body: oauthErrorBody(e), headers: e.headers, debug: e.debug };
    throw e;
  }
  assert.fail(`expected an OAuthError ${label}`);
}

const INVALID_CLIENT = { error: 'invalid_client', error_description: 'client authentication failed' };

describe('clients › private_key_jwt', () => {
  test('case=a signed assertion authenticates, with or without client_id, and only once', async (t) => {
    const { client, sign, auth, issuer } = await setup(t);
    const a = await sign();
    const ok = await auth(a);
    assert.deepEqual([ok.method, ok.client.id, ok.secretId], ['private_key_jwt', client.id, null]);
    const replay = await refusal(auth(a));
    assert.deepEqual(
      [replay.status, replay.body, replay.headers, replay.debug],
      [401, INVALID_CLIENT, {}, 'assertion_replayed'],
    );
    assert.equal((await auth(await sign({ aud: issuer }), { client_id: 'jwt-app' })).client.id, client.id);
  });

  test('case=two concurrent uses of one assertion: exactly one wins', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { sign, auth } = await setup(t);
    const a = await sign();
    const results = await Promise.allSettled([auth(a), auth(a), auth(a)]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  });

  test('case=every flawed assertion is invalid_client', async (t) => {
    const { sign, auth } = await setup(t);
    const now = new Date();
    const stranger = (await generateKeyPair('ES256')).privateKey;
    const rsa = (await generateKeyPair('RS256')).privateKey;
    const hsKey = new TextEncoder().encode('a-shared-secret-of-thirty-two-bytes!');
    const cases: [string, Promise<string>, Record<string, string>?][] = [
      ['other key', sign({}, { key: stranger })],
      ['unknown kid', sign({}, { kid: 'k2' })],
      ['wrong algorithm for the key', sign({}, { key: rsa, alg: 'RS256' })],
      ['HS256', sign({}, { key: hsKey as unknown as Key, alg: 'HS256' })],
      ['wrong audience', sign({ aud: 'https://elsewhere.example/token' })],
      ['wrong issuer', sign({ iss: 'someone-else' })],
      ['expired', sign({ exp: Math.floor(now.getTime() / 1000) - 120 })],
      ['no jti', sign({ jti: undefined })],
      ['lifetime beyond an hour', sign({ exp: Math.floor(now.getTime() / 1000) + 2 * 3600 })],
      ['client_id naming another client', sign(), { client_id: 'other-app' }],
      ['garbage', Promise.resolve('not-a-jwt')],
    ];
    for (const [name, assertion, form] of cases) {
      const r = await refusal(auth(await assertion, form ?? {}, now), name);
      assert.deepEqual([name, r.status, r.body], [name, 401, INVALID_CLIENT]);
    }
  });

  test('case=a client registered for secrets cannot use an assertion, nor one without keys', async (t) => {
    const { h, realm, sign, auth } = await setup(t);
    await h.ctx.db.query(
      `update clients set token_endpoint_auth_method = 'client_secret_basic' where realm_id = $1 and client_id = 'jwt-app'`,
      [realm.id],
    );
    assert.equal((await refusal(auth(await sign()))).debug, 'method_mismatch');
    await h.ctx.db.query(
      `update clients set token_endpoint_auth_method = 'private_key_jwt', jwks = null where realm_id = $1 and client_id = 'jwt-app'`,
      [realm.id],
    );
    assert.equal((await refusal(auth(await sign()))).debug, 'assertion_no_jwks');
  });

  test('case=expired assertion ids are cleaned up and may be reused afterwards', async (t) => {
    const { h, sign, auth } = await setup(t);
    const now = new Date();
    const jti = randomUUID();
    await auth(await sign({ jti }, { now }), {}, now);
    const later = new Date(now.getTime() + 10 * 60_000);
    assert.ok((await deleteExpiredAssertionJtis(h.ctx.db, later, 100)) >= 1);
    // Signed again with the same id after the first expired: accepted once more.
    await auth(await sign({ jti }, { now: later }), {}, later);
    assert.equal(
      (await refusal(auth(await sign({ jti }, { now: later }), {}, later))).debug,
      'assertion_replayed',
    );
  });
});
