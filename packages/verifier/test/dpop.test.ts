// The DPoP rules of the verifier on their own (RFC 9449 section 7; document 1, Authentication 8):
// the proof's binding to the key, the request and the token, its age, single use, the header
// schemes, and the replay cache failing closed when full.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { accessTokenOf } from '../src/bearer.ts';
import { confirmPossession, MemoryReplayCache } from '../src/dpop.ts';
import { VerificationError } from '../src/errors.ts';

const T = Date.parse('2026-11-29T10:00:00Z');
const URL_ = 'https://api.example.test/orders/7';
const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln';

async function key() {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { jwk, privateKey, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}
type Key = Awaited<ReturnType<typeof key>>;

function proof(k: Key, over: Record<string, unknown> = {}, header: { typ?: string; jwk?: JWK } = {}) {
  return new SignJWT({
    jti: randomUUID(),
    htm: 'GET',
    htu: URL_,
    iat: Math.floor(T / 1000),
    ath: createHash('sha256').update(TOKEN).digest('base64url'),
    ...over,
  })
    .setProtectedHeader({ alg: 'ES256', typ: header.typ ?? 'dpop+jwt', jwk: header.jwk ?? k.jwk })
    .sign(k.privateKey);
}

const code = (c: string) => (e: unknown) => e instanceof VerificationError && e.code === c;
const confirm = (
  jkt: string | undefined,
  p: string | undefined,
  replay = new MemoryReplayCache(10, () => T),
  now = T,
) =>
  confirmPossession(
    jkt === undefined ? undefined : { jkt },
    TOKEN,
    p === undefined ? undefined : { proof: p, method: 'GET', url: `${URL_}?page=2` },
    replay,
    now,
  );

describe('verifier › DPoP', () => {
  test('case=a proof by the bound key for this request and token is accepted once', async () => {
    const k = await key();
    const replay = new MemoryReplayCache(10, () => T);
    const p = await proof(k);
    await confirm(k.jkt, p, replay);
    await assert.rejects(confirm(k.jkt, p, replay), code('invalid_dpop_proof'));
  });

  test('case=a bound token without a proof, or an unbound token with one, is not accepted', async () => {
    const k = await key();
    await assert.rejects(confirm(k.jkt, undefined), code('invalid_token'));
    await assert.rejects(confirm(undefined, await proof(k)), code('invalid_token'));
    await confirm(undefined, undefined);
  });

  test('case=another key, method, URL, token, age or type is refused', async () => {
    const k = await key();
    const other = await key();
    const bad = [
      await proof(other),
      await proof(k, { htm: 'POST' }),
      await proof(k, { htu: 'https://api.example.test/orders/8' }),
      await proof(k, { ath: createHash('sha256').update('another').digest('base64url') }),
      await proof(k, { ath: undefined }),
      await proof(k, { iat: Math.floor(T / 1000) - 121 }),
      await proof(k, { iat: Math.floor(T / 1000) + 31 }),
      await proof(k, { jti: 'x'.repeat(129) }),
      await proof(k, {}, { typ: 'jwt' }),
      await proof(k, {}, { jwk: other.jwk }),
      'not.a.proof',
    ];
    for (const p of bad) await assert.rejects(confirm(k.jkt, p), code('invalid_dpop_proof'), p);
    await assert.rejects(
      confirmPossession(
        { jkt: k.jkt },
        TOKEN,
        { proof: [await proof(k), await proof(k)], method: 'GET', url: URL_ },
        new MemoryReplayCache(),
        T,
      ),
      code('invalid_dpop_proof'),
    );
  });

  test('case=a full replay cache refuses rather than forgets', () => {
    let now = T;
    const cache = new MemoryReplayCache(2, () => now);
    assert.equal(cache.useOnce('a', T + 1000), true);
    assert.equal(cache.useOnce('a', T + 1000), false);
    assert.equal(cache.useOnce('b', T + 1000), true);
    assert.throws(() => cache.useOnce('c', T + 1000), code('unavailable'));
    now = T + 1001;
    assert.equal(cache.useOnce('c', T + 5000), true);
  });

  test('case=the Authorization header names the scheme', () => {
    assert.deepEqual(accessTokenOf('DPoP abc.def'), { scheme: 'dpop', token: 'abc.def' });
    assert.deepEqual(accessTokenOf('bearer abc'), { scheme: 'bearer', token: 'abc' });
    assert.throws(() => accessTokenOf('Basic abc'), code('invalid_token'));
    assert.throws(() => accessTokenOf(undefined), code('invalid_token'));
  });
});
