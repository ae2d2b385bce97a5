import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRemoteJWKSet, type JWK, jwtVerify, SignJWT } from 'jose';
import type { SigningAlgorithm } from '../../../src/platform/config/settings.ts';
import { startHarness } from '../../harness/harness.ts';
import { insertKey, keysIn, PRIVATE_JWK_MEMBERS, TestClock } from './key-helpers.ts';

const jwksPath = (realm: string) => `/realms/${realm}/jwks`;

async function keySet(res: Response): Promise<JWK[]> {
  assert.equal(res.status, 200);
  const body = (await res.json()) as { keys: JWK[] };
  assert.deepEqual(Object.keys(body), ['keys']);
  return body.keys;
}

function assertPublicOnly(key: JWK): void {
  for (const member of PRIVATE_JWK_MEMBERS) {
    assert.equal(member in key, false, `published key ${key.kid} carries private member ${member}`);
  }
}

describe('keys › JWKS', () => {
  test('case=serves the realm key set as cacheable public JSON', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const [active] = await keysIn(h.ctx.db, realm.id, 'active');
    assert.ok(active);

    const res = await h.get(jwksPath(realm.name));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json(;|$)/);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
    const keys = await keySet(res);
    assert.equal(keys.length, 1);
    const [key] = keys;
    assert.ok(key);
    assert.equal(key.kid, active.kid);
    assert.equal(key.alg, 'RS256');
    assert.equal(key.use, 'sig');
    assert.equal(key.kty, 'RSA');
    assert.equal(typeof key.n, 'string');
    assert.equal(key.e, 'AQAB');
    assertPublicOnly(key);
  });

  test('case=an unknown realm is a 404 problem', async (t) => {
    const h = await startHarness(t);
    const res = await h.get(jwksPath('no-such-realm'));
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body.status, 404);
    assert.equal(body.code, 'not_found');
    assert.equal('keys' in body, false);
  });

  test('case=publishes pending, active and retiring keys, never retired or compromised ones', async (t) => {
    const h = await startHarness(t);
    const keyring = h.ctx.keyring!;
    const realm = await h.createRealm();
    const now = h.ctx.clock.now();
    const [active] = await keysIn(h.ctx.db, realm.id, 'active');
    assert.ok(active);
    // Mixed algorithms, so the private members of RSA, EC and OKP keys are all checked.
    const pending = await insertKey(h.ctx.db, keyring, realm.id, 'pending', now, 'ES256');
    const retiring = await insertKey(h.ctx.db, keyring, realm.id, 'retiring', now, 'EdDSA');
    const retired = await insertKey(h.ctx.db, keyring, realm.id, 'retired', now, 'PS256');
    const compromised = await insertKey(h.ctx.db, keyring, realm.id, 'compromised', now, 'RS256');

    const keys = await keySet(await h.get(jwksPath(realm.name)));
    assert.deepEqual(
      keys.map((k) => k.kid).sort(),
      [active.kid, pending.kid, retiring.kid].sort(),
      'exactly the pending, active and retiring keys are published',
    );
    assert.equal(
      keys.some((k) => k.kid === retired.kid || k.kid === compromised.kid),
      false,
    );
    for (const k of keys) {
      assert.ok(k.kid && k.alg && k.use === 'sig', `key ${k.kid} names kid, alg and use`);
      assertPublicOnly(k);
    }
    assert.equal(keys.find((k) => k.kid === pending.kid)?.alg, 'ES256');
    assert.equal(keys.find((k) => k.kid === retiring.kid)?.crv, 'Ed25519');
  });

  test('case=each server process caches the key set for five seconds', async (t) => {
    const clock = new TestClock();
    const h = await startHarness(t, { clock });
    const realm = await h.createRealm();
    assert.equal((await keySet(await h.get(jwksPath(realm.name)))).length, 1);

    const pending = await insertKey(h.ctx.db, h.ctx.keyring!, realm.id, 'pending', clock.now());
    assert.equal((await keySet(await h.get(jwksPath(realm.name)))).length, 1, 'served from the cache');
    clock.advance(4999);
    assert.equal((await keySet(await h.get(jwksPath(realm.name)))).length, 1, 'still cached at 4.999 s');

    // Another process has its own cache and sees the new key at once.
    const other = await startHarness(t, { clock });
    const seenElsewhere = await keySet(await other.get(jwksPath(realm.name)));
    assert.ok(seenElsewhere.some((k) => k.kid === pending.kid));

    clock.advance(1);
    const refreshed = await keySet(await h.get(jwksPath(realm.name)));
    assert.equal(refreshed.length, 2, 'refreshed once five seconds passed');
    assert.ok(refreshed.some((k) => k.kid === pending.kid));
  });

  const algorithms: SigningAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];
  for (const alg of algorithms) {
    test(`case=a token signed with the active ${alg} key verifies against the served key set`, async (t) => {
      const h = await startHarness(t, { overrides: { 'keys.signing_algorithm': alg } });
      const realm = await h.createRealm();
      const signer = await h.ctx.keyStore.activeSigner(realm.id);
      assert.ok(signer, 'the active key can be unsealed');
      assert.equal(signer.algorithm, alg);

      const issuer = `${h.publicUrl}/realms/${realm.name}`;
      const jwt = await new SignJWT({ scope: 'openid' })
        .setProtectedHeader({ alg, kid: signer.kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setSubject('usr_test')
        .setAudience('test-audience')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(signer.key);

      const jwks = createRemoteJWKSet(new URL(`${h.publicUrl}${jwksPath(realm.name)}`));
      const { payload, protectedHeader } = await jwtVerify(jwt, jwks, {
        issuer,
        audience: 'test-audience',
        algorithms: [alg],
      });
      assert.equal(protectedHeader.kid, signer.kid);
      assert.equal(payload.sub, 'usr_test');

      // The served key is the realm's own: another realm's key set does not verify the token.
      const otherRealm = await h.createRealm();
      const otherJwks = createRemoteJWKSet(new URL(`${h.publicUrl}${jwksPath(otherRealm.name)}`));
      await assert.rejects(jwtVerify(jwt, otherJwks, { algorithms: [alg] }), /no applicable key found/i);
    });
  }
});
