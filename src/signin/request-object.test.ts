// Request objects (RFC 9101): what the verifier accepts and how the object's claims become
// authorization parameters.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { RequestObjectError, verifyRequestObject, withRequestObjectParams } from './request-object.ts';

const ISSUER = 'https://id.example.com/realms/main';
const NOW = new Date('2026-01-01T00:00:00Z');
const at = (s: number) => Math.floor(NOW.getTime() / 1000) + s;

async function keys() {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] } };
}

const ctx = (jwks: { keys: Record<string, unknown>[] } | null) => ({
  clientId: 'app',
  jwks,
  issuer: ISSUER,
  now: NOW,
  clockSkewSeconds: 60,
});

const refused = (pattern: RegExp) => (e: unknown) =>
  e instanceof RequestObjectError && pattern.test(e.message);

describe('signin › request objects', () => {
  test('case=a signed object from the client for this issuer is accepted', async () => {
    const k = await keys();
    const jwt = await new SignJWT({ scope: 'openid', state: 's' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer('app')
      .setAudience(ISSUER)
      .setExpirationTime(at(300))
      .sign(k.privateKey);
    const payload = await verifyRequestObject(jwt, ctx(k.jwks));
    assert.equal(payload.state, 's');
  });

  test('case=unsigned, keyless, long-lived, foreign or nesting objects are refused', async () => {
    const k = await keys();
    const sign = (claims: Record<string, unknown>, exp = at(300), iss = 'app') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(iss)
        .setAudience(ISSUER)
        .setExpirationTime(exp)
        .sign(k.privateKey);
    const none = new UnsecuredJWT({}).setIssuer('app').setAudience(ISSUER).setExpirationTime(at(60)).encode();
    await assert.rejects(verifyRequestObject(none, ctx(k.jwks)), refused(/unsigned/));
    await assert.rejects(verifyRequestObject(await sign({}), ctx(null)), refused(/no registered keys/));
    await assert.rejects(verifyRequestObject(await sign({}, at(3600)), ctx(k.jwks)), refused(/exp is more/));
    await assert.rejects(
      verifyRequestObject(await sign({}, at(300), 'other'), ctx(k.jwks)),
      refused(/verification/),
    );
    await assert.rejects(
      verifyRequestObject(await sign({ client_id: 'other' }), ctx(k.jwks)),
      refused(/client_id/),
    );
    await assert.rejects(
      verifyRequestObject(await sign({ request_uri: 'x' }), ctx(k.jwks)),
      refused(/cannot carry/),
    );
    await assert.rejects(verifyRequestObject('a.b', ctx(k.jwks)), refused(/not a JWT/));
  });

  test('case=the object parameters replace the ones sent beside it', () => {
    const merged = withRequestObjectParams(
      { clientId: 'app', request: 'jwt', scope: 'openid', state: 'outside', resource: [] },
      {
        iss: 'app',
        state: 'inside',
        max_age: 30,
        claims: { id_token: { email: null } },
        resource: 'https://api.example.com',
      },
    );
    assert.deepEqual(merged, {
      clientId: 'app',
      scope: 'openid',
      state: 'inside',
      maxAge: 30,
      claims: '{"id_token":{"email":null}}',
      resource: ['https://api.example.com'],
    });
    assert.throws(() => withRequestObjectParams({}, { state: 5 }), RequestObjectError);
    assert.throws(() => withRequestObjectParams({}, { max_age: -1 }), RequestObjectError);
  });
});
