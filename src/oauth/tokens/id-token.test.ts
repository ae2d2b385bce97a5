// ID tokens: claims, at_hash per algorithm, and a jose round trip for every signing algorithm.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Signer } from '../../keys/key-store.ts';
import { generateKeyMaterial, privateKeyFromPkcs8 } from '../../keys/signing-key-material.ts';
import type { SigningAlgorithm } from '../../platform/config/settings.ts';
import { accessTokenHash, type IdTokenInput, idTokenClaims, signIdToken } from './id-token.ts';

const ALGS: SigningAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const NOW = new Date('2026-11-22T10:00:00.999Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);
const ISSUER = 'https://id.example.test/realms/acme';

const input = (over: Partial<IdTokenInput> = {}): IdTokenInput => ({
  issuer: ISSUER,
  subject: 'usr_01jd2',
  clientId: 'cli_web',
  authTime: new Date('2026-11-22T09:59:30Z'),
  ttlMs: 5 * 60_000,
  nonce: 'n-0S6_WzA2Mj',
  acr: 'mfa',
  amr: ['pwd', 'otp'],
  sessionId: 'ses_01jd4',
  ...over,
});

// The left half of the named hash, computed here without the module under test.
const leftHalf = (alg: 'sha256' | 'sha512', token: string): string => {
  const d = createHash(alg).update(token).digest();
  return d.subarray(0, d.length / 2).toString('base64url');
};

describe('at_hash', () => {
  // OIDC Core Appendix A.3 publishes this pair (RS256, so SHA-256).
  const CORE_TOKEN = 'jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y';

  test('case=OIDC Core example vector for the SHA-256 algorithms', () => {
    for (const alg of ['RS256', 'PS256', 'ES256'] as const) {
      assert.equal(accessTokenHash(CORE_TOKEN, alg), '77QmUPtjPfzWtF2AnpK9RQ', alg);
    }
  });

  test('case=EdDSA (Ed25519) uses the left half of SHA-512', () => {
    // Computed with Python hashlib.
    assert.equal(accessTokenHash(CORE_TOKEN, 'EdDSA'), 'q7nS86GgvvFaZkzALLWqJYaJIKw2wCDAVfCAsm5CrBM');
  });

  test('case=matches an independent computation for every algorithm and length', () => {
    const tokens = ['a', `pa_at_${'Z'.repeat(43)}`, 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln'];
    for (const token of tokens) {
      for (const alg of ALGS) {
        const expected = leftHalf(alg === 'EdDSA' ? 'sha512' : 'sha256', token);
        assert.equal(accessTokenHash(token, alg), expected);
        assert.equal(Buffer.from(expected, 'base64url').length, alg === 'EdDSA' ? 32 : 16);
      }
    }
  });
});

describe('ID token claims', () => {
  test('case=OIDC claims with nonce, session and at_hash', () => {
    const c = idTokenClaims(input({ accessToken: 'tok' }), 'ES256', NOW);
    assert.deepEqual(c, {
      iss: ISSUER,
      sub: 'usr_01jd2',
      aud: 'cli_web',
      exp: NOW_S + 300,
      iat: NOW_S,
      auth_time: Math.floor(Date.parse('2026-11-22T09:59:30Z') / 1000),
      nonce: 'n-0S6_WzA2Mj',
      acr: 'mfa',
      amr: ['pwd', 'otp'],
      sid: 'ses_01jd4',
      at_hash: leftHalf('sha256', 'tok'),
    });
  });

  test('case=no nonce, session, amr or access token: the claims are absent, auth_time stays', () => {
    const c = idTokenClaims(input({ nonce: null, sessionId: null, amr: [], acr: null }), 'RS256', NOW);
    for (const absent of ['nonce', 'sid', 'amr', 'acr', 'at_hash', 'azp'])
      assert.equal(absent in c, false, absent);
    assert.equal(typeof c.auth_time, 'number');
  });

  test('case=lifetime follows tokens.id_token_ttl', () => {
    assert.equal(idTokenClaims(input({ ttlMs: 90_500 }), 'RS256', NOW).exp, NOW_S + 90);
    assert.throws(() => idTokenClaims(input({ ttlMs: 999 }), 'RS256', NOW), RangeError);
  });
});

describe('ID tokens, checked with jose', () => {
  for (const alg of ALGS) {
    test(`case=round trip/alg=${alg}`, async () => {
      const m = await generateKeyMaterial(alg);
      const signer: Signer = { kid: m.kid, algorithm: alg, key: privateKeyFromPkcs8(m.privatePkcs8) };
      const accessToken = `pa_at_${'q'.repeat(43)}`;
      const { token, claims } = await signIdToken(input({ accessToken }), signer, NOW);

      assert.deepEqual(decodeProtectedHeader(token), { alg, kid: m.kid, typ: 'JWT' });
      const { payload } = await jwtVerify(token, createLocalJWKSet({ keys: [m.publicJwk] }), {
        issuer: ISSUER,
        audience: 'cli_web',
        typ: 'JWT',
        algorithms: [alg],
        currentDate: NOW,
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce'],
      });
      assert.deepEqual(payload, claims);
      assert.equal(payload.at_hash, leftHalf(alg === 'EdDSA' ? 'sha512' : 'sha256', accessToken));
    });
  }
});
