// Access token construction: RFC 9068 claims and header, checked independently with jose, and
// the opaque format and lifetime rules.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Signer } from '../keys/key-store.ts';
import { generateKeyMaterial, privateKeyFromPkcs8 } from '../keys/signing-key-material.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import {
  type AccessTokenInput,
  accessTokenClaims,
  accessTokenLifetimeSeconds,
  isOpaqueAccessToken,
  issueOpaqueAccessToken,
  opaqueAccessTokenDigest,
  signAccessToken,
} from './access-token.ts';

const ALGS: SigningAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const NOW = new Date('2026-11-22T10:00:00.250Z');
const NOW_S = Math.floor(NOW.getTime() / 1000);
const ISSUER = 'https://id.example.test/realms/acme';
const AUDIENCE = 'https://api.example.test/orders';
const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

const input = (over: Partial<AccessTokenInput> = {}): AccessTokenInput => ({
  issuer: ISSUER,
  subject: 'usr_01jd2',
  audience: AUDIENCE,
  clientId: 'cli_01jd3',
  scopes: ['orders:read', 'orders:write'],
  lifetimeSeconds: 300,
  authTime: new Date('2026-11-22T09:58:00.900Z'),
  acr: 'mfa',
  amr: ['pwd', 'otp'],
  sessionId: 'ses_01jd4',
  ...over,
});

describe('access token lifetime', () => {
  const MIN = 60_000;
  const cases: Array<[number | null | undefined, number, number]> = [
    [undefined, 60 * MIN, 300],
    [null, 60 * MIN, 300],
    [30, 60 * MIN, 30],
    [3600, 60 * MIN, 3600],
    [3600, 30 * MIN, 1800],
    [900, 10 * MIN, 600],
    [300, 30_000, 30],
    [300, 30_999, 30],
  ];
  for (const [ttl, max, want] of cases) {
    test(`case=resource ${ttl} s with cap ${max} ms gives ${want} s`, () => {
      assert.equal(accessTokenLifetimeSeconds(ttl, max), want);
    });
  }

  test('case=a resource lifetime outside 30..3600 or not an integer is refused', () => {
    for (const bad of [0, 29, 3601, 30.5, -300, Number.NaN]) {
      assert.throws(() => accessTokenLifetimeSeconds(bad, 60 * MIN), RangeError, String(bad));
    }
  });
});

describe('access token claims', () => {
  test('case=RFC 9068 claims, absent facts left out', () => {
    const c = accessTokenClaims(input(), NOW);
    assert.deepEqual(Object.keys(c), [
      'iss',
      'sub',
      'aud',
      'exp',
      'iat',
      'jti',
      'client_id',
      'scope',
      'auth_time',
      'acr',
      'amr',
      'sid',
    ]);
    assert.equal(c.iat, NOW_S);
    assert.equal(c.exp, NOW_S + 300);
    assert.equal(c.auth_time, Math.floor(Date.parse('2026-11-22T09:58:00.900Z') / 1000));
    assert.equal(c.scope, 'orders:read orders:write');
    assert.equal(c.aud, AUDIENCE);
    assert.equal('nbf' in c, false);
  });

  test('case=jti is fresh and carries at least 128 bits', () => {
    const jtis = new Set(Array.from({ length: 200 }, () => accessTokenClaims(input(), NOW).jti));
    assert.equal(jtis.size, 200);
    for (const jti of jtis) assert.ok(Buffer.from(jti, 'base64url').length * 8 >= 128);
  });

  test('case=client token without user facts; org_id, act and cnf when given', () => {
    const c = accessTokenClaims(
      input({
        scopes: [],
        authTime: null,
        acr: null,
        amr: [],
        sessionId: null,
        orgId: 'org_01jd5',
        act: { sub: 'cli_svc', act: { sub: 'cli_first' } },
        cnf: { jkt: JKT },
      }),
      NOW,
    );
    for (const absent of ['scope', 'auth_time', 'acr', 'amr', 'sid'])
      assert.equal(absent in c, false, absent);
    assert.equal(c.org_id, 'org_01jd5');
    assert.deepEqual(c.act, { sub: 'cli_svc', act: { sub: 'cli_first' } });
    assert.deepEqual(c.cnf, { jkt: JKT });
    assert.deepEqual(accessTokenClaims(input({ cnf: { 'x5t#S256': JKT } }), NOW).cnf, { 'x5t#S256': JKT });
  });

  test('case=malformed cnf, scopes or lifetime are programming errors', () => {
    const bad: Array<Partial<AccessTokenInput>> = [
      { cnf: { jkt: 'short' } },
      { cnf: { jkt: JKT, 'x5t#S256': JKT } as never },
      { cnf: {} as never },
      { scopes: ['two words'] },
      { scopes: [''] },
      { lifetimeSeconds: 0 },
      { lifetimeSeconds: 1.5 },
    ];
    for (const over of bad) assert.throws(() => accessTokenClaims(input(over), NOW), RangeError);
  });
});

describe('JWT access tokens, checked with jose', () => {
  for (const alg of ALGS) {
    test(`case=round trip/alg=${alg}`, async () => {
      const m = await generateKeyMaterial(alg);
      const signer: Signer = { kid: m.kid, algorithm: alg, key: privateKeyFromPkcs8(m.privatePkcs8) };
      const { token, claims } = await signAccessToken(
        input({ orgId: 'org_1', cnf: { jkt: JKT } }),
        signer,
        NOW,
      );

      assert.deepEqual(decodeProtectedHeader(token), { alg, kid: m.kid, typ: 'at+jwt' });
      const { payload, protectedHeader } = await jwtVerify(
        token,
        createLocalJWKSet({ keys: [m.publicJwk] }),
        {
          issuer: ISSUER,
          audience: AUDIENCE,
          typ: 'at+jwt',
          algorithms: [alg],
          currentDate: NOW,
          requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id'],
        },
      );
      assert.equal(protectedHeader.alg, alg);
      assert.deepEqual(payload, claims);
    });
  }

  test('case=a signer whose algorithm is outside the allowlist is refused', async () => {
    const m = await generateKeyMaterial('ES256');
    const signer: Signer = { kid: m.kid, algorithm: 'ES384', key: privateKeyFromPkcs8(m.privatePkcs8) };
    await assert.rejects(signAccessToken(input(), signer, NOW), /unsupported algorithm/);
  });
});

describe('opaque access tokens', () => {
  test('case=prefix and 256 bits of randomness', () => {
    const { token } = issueOpaqueAccessToken(input(), NOW);
    assert.match(token, /^pa_at_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(token.slice('pa_at_'.length), 'base64url').length, 32);
    assert.equal(isOpaqueAccessToken(token), true);
    assert.notEqual(issueOpaqueAccessToken(input(), NOW).token, token);
  });

  test('case=digest is SHA-256 hex of the whole token and stable', () => {
    // Vector computed outside Node (Python hashlib), so a change of encoding or prefix handling shows.
    const token = `pa_at_${'A'.repeat(43)}`;
    assert.equal(
      opaqueAccessTokenDigest(token),
      'db554e3f69cc1977a842c8c7b7d15ef0a7df94d2bb509513ea07597b076e5557',
    );
    const issued = issueOpaqueAccessToken(input(), NOW);
    assert.equal(issued.digest, createHash('sha256').update(issued.token).digest('hex'));
    assert.equal(opaqueAccessTokenDigest(issued.token), issued.digest);
  });

  test('case=the stored record is the same claims set a JWT would carry', () => {
    const { claims } = issueOpaqueAccessToken(input({ cnf: { jkt: JKT } }), NOW);
    assert.equal(claims.iss, ISSUER);
    assert.equal(claims.aud, AUDIENCE);
    assert.equal(claims.exp, NOW_S + 300);
    assert.deepEqual(claims.cnf, { jkt: JKT });
  });

  test('case=JWTs and near misses are not opaque tokens', () => {
    for (const t of [
      'eyJhbGciOi.x.y',
      `pa_at_${'A'.repeat(42)}`,
      `pa_at_${'A'.repeat(44)}`,
      `pa_rt_${'A'.repeat(43)}`,
    ]) {
      assert.equal(isOpaqueAccessToken(t), false, t);
    }
  });
});
