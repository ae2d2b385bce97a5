// The DPoP proof checks a server runs (RFC 9449 section 4.3), as the FAPI 2.0 negative tests send them,
// and the limits of spec doc 1, Authentication 8; proofs are built with jose (test/harness/dpop-kit.ts).
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, test } from 'node:test';
import { exportJWK, SignJWT, UnsecuredJWT } from 'jose';
import { type DpopKey, dpopKey } from '../../test/harness/dpop-kit.ts';
import { checkProof, dpopHeaderOf, normalisedHtu } from './dpop-proof.ts';

const URL_ = 'https://id.example.com/realms/main/oauth/token';
const NOW = new Date('2026-11-29T08:00:00Z');
const at = () => NOW;
const nowS = Math.floor(NOW.getTime() / 1000);

const expect = (over: Partial<Parameters<typeof checkProof>[1]> = {}) => ({
  method: 'POST',
  url: URL_,
  now: NOW,
  ...over,
});

async function refused(proof: string, reason: RegExp, over: Partial<Parameters<typeof checkProof>[1]> = {}) {
  const r = await checkProof(proof, expect(over));
  assert.equal(r.ok, false, `accepted; expected ${reason}`);
  if (!r.ok) assert.match(r.reason, reason);
}

async function accepted(proof: string, key: DpopKey, over: Partial<Parameters<typeof checkProof>[1]> = {}) {
  const r = await checkProof(proof, expect(over));
  assert.ok(r.ok, r.ok ? '' : r.reason);
  if (r.ok) assert.equal(r.proof.jkt, key.jkt);
}

describe('DPoP proof checks', () => {
  test('each allowed algorithm verifies and yields the key thumbprint', async () => {
    for (const alg of ['ES256', 'PS256', 'RS256', 'EdDSA', 'Ed25519']) {
      const key = await dpopKey(alg, { now: at });
      await accepted(await key.proof({ url: URL_ }), key);
    }
  });

  test('refused: wrong or missing typ, alg none, HS256, a private jwk, a small RSA key, a wrong signature', async () => {
    const key = await dpopKey('ES256', { now: at });
    await refused(await key.proof({ url: URL_, typ: 'JWT' }), /does not verify/);
    const unsecured = new UnsecuredJWT({ jti: 'a', htm: 'POST', htu: URL_, iat: nowS }).encode();
    await refused(unsecured, /compact JWS|algorithm/);
    const hs = await new SignJWT({ jti: 'a', htm: 'POST', htu: URL_, iat: nowS })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.publicJwk })
      .sign(new Uint8Array(32));
    await refused(hs, /algorithm is not allowed/);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await refused(await key.proof({ url: URL_, jwk: await exportJWK(privateKey) }), /private members/);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    // jose will not sign with it, so the JWS is put together by hand.
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const input = `${b64({ alg: 'RS256', typ: 'dpop+jwt', jwk: await exportJWK(small.publicKey) })}.${b64({ jti: 'a', htm: 'POST', htu: URL_, iat: nowS })}`;
    const smallProof = `${input}.${sign('sha256', Buffer.from(input), small.privateKey).toString('base64url')}`;
    await refused(smallProof, /does not fit/);
    const other = await dpopKey('ES256', { now: at });
    await refused(await key.proof({ url: URL_, jwk: other.publicJwk }), /does not verify/);
    await refused(await key.proof({ url: URL_, jwk: (await dpopKey('RS256')).publicJwk }), /does not fit/);
    const noJwk = await new SignJWT({ jti: 'a', htm: 'POST', htu: URL_, iat: nowS })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt' })
      .sign(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    await refused(noJwk, /no jwk/);
  });

  test('refused: missing or bad jti, htm, htu, iat; proof over 4096 bytes; not a JWT', async () => {
    const key = await dpopKey('ES256', { now: at });
    for (const claim of ['jti', 'htm', 'htu', 'iat'])
      await refused(await key.proof({ url: URL_, omit: [claim] }), new RegExp(claim));
    await refused(await key.proof({ url: URL_, jti: 'x'.repeat(129) }), /jti/);
    await accepted(await key.proof({ url: URL_, jti: 'x'.repeat(128) }), key);
    await refused(await key.proof({ url: URL_, method: 'GET' }), /htm/);
    await refused(await key.proof({ url: URL_, method: 'post' }), /htm/, {}); // exact match
    await refused(await key.proof({ url: 'https://id.example.com/realms/other/oauth/token' }), /htu/);
    await refused(await key.proof({ url: 'https://evil.example.com/realms/main/oauth/token' }), /htu/);
    await refused(await key.proof({ url: URL_, jti: 'j'.repeat(4000) }), /4096/);
    await refused('not.a.jwt!', /compact JWS/);
  });

  test('htu: query and fragment ignored, scheme and host case and default port normalised', async () => {
    const key = await dpopKey('ES256', { now: at });
    await accepted(await key.proof({ url: `${URL_}?a=1#f` }), key);
    await accepted(await key.proof({ url: 'HTTPS://ID.EXAMPLE.COM:443/realms/main/oauth/token' }), key);
    await accepted(await key.proof({ url: URL_ }), key, { url: `${URL_}?x=y` });
    assert.equal(normalisedHtu('https://A.example.com:443/p?q#f'), 'https://a.example.com/p');
    assert.equal(normalisedHtu('ftp://a.example.com/p'), null);
  });

  test('iat: 2 minutes old and 30 seconds ahead pass, one second beyond fails', async () => {
    const key = await dpopKey('ES256', { now: at });
    await accepted(await key.proof({ url: URL_, iat: nowS - 10 }), key);
    await accepted(await key.proof({ url: URL_, iat: nowS + 10 }), key);
    await accepted(await key.proof({ url: URL_, iat: nowS - 120 }), key);
    await accepted(await key.proof({ url: URL_, iat: nowS + 30 }), key);
    await refused(await key.proof({ url: URL_, iat: nowS - 121 }), /too old/);
    await refused(await key.proof({ url: URL_, iat: nowS + 31 }), /future/);
    await refused(await key.proof({ url: URL_, iat: nowS - 3600 }), /too old/);
    await refused(await key.proof({ url: URL_, iat: nowS + 3600 }), /future/);
  });

  test('ath: required at a resource and must hash the presented token', async () => {
    const key = await dpopKey('ES256', { now: at });
    await accepted(await key.proof({ url: URL_, accessToken: 'tok' }), key, { accessToken: 'tok' });
    await refused(await key.proof({ url: URL_ }), /ath is missing/, { accessToken: 'tok' });
    await refused(await key.proof({ url: URL_, accessToken: 'other' }), /ath does not match/, {
      accessToken: 'tok',
    });
  });

  test('several DPoP headers count as one malformed value', async () => {
    const key = await dpopKey('ES256', { now: at });
    const p = await key.proof({ url: URL_ });
    const joined = dpopHeaderOf({ dpop: [p, p] });
    assert.ok(joined);
    await refused(joined, /compact JWS/);
    assert.equal(dpopHeaderOf({}), null);
  });
});
