// Offline access token verification: round trips for every algorithm, then hostile tokens, each of
// which must come back as a typed refusal rather than an exception.
import assert from 'node:assert/strict';
import { createPublicKey, sign } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { CompactSign, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { Signer } from '../keys/key-store.ts';
import { generateKeyMaterial, type KeyMaterial, privateKeyFromPkcs8 } from '../keys/signing-key-material.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import { type AccessTokenInput, signAccessToken } from './access-token.ts';
import {
  type AccessTokenExpectations,
  type AccessTokenVerification,
  AccessTokenVerifier,
  checkAccessTokenClaims,
  isAccessTokenTyp,
  type KeySetSource,
} from './verify-access-token.ts';

const ALGS: SigningAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const REALM = 'acme';
const ISSUER = 'https://id.example.test/realms/acme';
const AUDIENCE = 'https://id.example.test/api/v1/realms/acme';
const EXPECTED: AccessTokenExpectations = { realmName: REALM, issuer: ISSUER, audience: AUDIENCE };
const T0 = new Date('2026-11-22T10:00:00Z');
const T0_S = T0.getTime() / 1000;
const SKEW_MS = 60_000;
const MAX_TOKEN_BYTES = 8192;
const JKT = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

const keys = new Map<SigningAlgorithm, KeyMaterial>();
const signerOf = (m: KeyMaterial): Signer => ({
  kid: m.kid,
  algorithm: m.algorithm,
  key: privateKeyFromPkcs8(m.privatePkcs8),
});

before(async () => {
  for (const alg of ALGS) keys.set(alg, await generateKeyMaterial(alg));
});

/** A key store stand-in: the same body object until `publish` replaces it, as the real cache does. */
class FakeKeySets implements KeySetSource {
  body: { keys: JWK[] } | null;
  calls = 0;
  constructor(keyList: JWK[]) {
    this.body = { keys: keyList };
  }
  publish(keyList: JWK[]): void {
    this.body = { keys: keyList };
  }
  async publishedKeySet(realmName: string): Promise<{ keys: JWK[] } | null> {
    this.calls++;
    return realmName === REALM ? this.body : null;
  }
}

interface Fixture {
  verifier: AccessTokenVerifier;
  keySets: FakeKeySets;
  setNow(d: Date): void;
}

function fixture(maxTokenBytes = MAX_TOKEN_BYTES): Fixture {
  let now = T0;
  const keySets = new FakeKeySets([...keys.values()].map((m) => m.publicJwk));
  const verifier = new AccessTokenVerifier({
    keySets,
    clock: { now: () => now },
    clockSkewMs: SKEW_MS,
    maxTokenBytes,
  });
  return { verifier, keySets, setNow: (d) => (now = d) };
}

const userInput = (over: Partial<AccessTokenInput> = {}): AccessTokenInput => ({
  issuer: ISSUER,
  subject: 'usr_alice',
  audience: AUDIENCE,
  clientId: 'cli_cli',
  scopes: ['realm.admin'],
  lifetimeSeconds: 300,
  authTime: new Date(T0.getTime() - 30_000),
  acr: 'mfa',
  amr: ['pwd', 'otp'],
  sessionId: 'ses_1',
  ...over,
});

const baseClaims = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: ISSUER,
  sub: 'usr_alice',
  aud: AUDIENCE,
  exp: T0_S + 300,
  iat: T0_S,
  jti: 'jti-1',
  client_id: 'cli_cli',
  scope: 'realm.admin',
  ...over,
});

/** Signs arbitrary header and claims with a published key, for the cases our builder cannot make. */
async function forge(
  alg: SigningAlgorithm,
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
): Promise<string> {
  const m = keys.get(alg)!;
  return new SignJWT(claims)
    .setProtectedHeader({ alg, kid: m.kid, typ: 'at+jwt', ...header })
    .sign(privateKeyFromPkcs8(m.privatePkcs8));
}

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

function assertRefused(r: AccessTokenVerification, reason: string, claim?: string): void {
  assert.equal(r.ok, false, `expected ${reason}, got ok`);
  if (r.ok) return;
  assert.equal(r.reason, reason);
  if (claim) assert.equal(r.claim, claim);
}

describe('access token verification: round trips', () => {
  for (const alg of ALGS) {
    test(`case=issued token verifies/alg=${alg}`, async () => {
      const { verifier } = fixture();
      const { token, claims } = await signAccessToken(
        userInput({ orgId: 'org_1', act: { sub: 'cli_svc' }, grantClientId: 'cli_web' }),
        signerOf(keys.get(alg)!),
        T0,
      );
      const r = await verifier.verify(token, EXPECTED);
      assert.ok(r.ok, JSON.stringify(r));
      assert.deepEqual(r.token, {
        kid: keys.get(alg)!.kid,
        algorithm: alg,
        issuer: ISSUER,
        subject: 'usr_alice',
        audiences: [AUDIENCE],
        expiresAt: claims.exp,
        issuedAt: claims.iat,
        notBefore: null,
        tokenId: claims.jti,
        clientId: 'cli_cli',
        scopes: ['realm.admin'],
        authTime: claims.auth_time,
        acr: 'mfa',
        amr: ['pwd', 'otp'],
        sessionId: 'ses_1',
        orgId: 'org_1',
        act: { sub: 'cli_svc' },
        grantClientId: 'cli_web',
        supportGrantId: null,
        cnf: null,
      });
    });
  }

  test('case=client token without user facts verifies with empty defaults', async () => {
    const { verifier } = fixture();
    const input = userInput({ scopes: [], authTime: null, acr: null, amr: null, sessionId: null });
    const { token } = await signAccessToken(input, signerOf(keys.get('ES256')!), T0);
    const r = await verifier.verify(token, EXPECTED);
    assert.ok(r.ok);
    assert.deepEqual(
      [r.token.scopes, r.token.authTime, r.token.acr, r.token.amr, r.token.sessionId],
      [[], null, null, [], null],
    );
  });

  test('case=an aud array containing the expected audience is accepted', async () => {
    const r = await fixture().verifier.verify(
      await forge('ES256', baseClaims({ aud: ['https://other.example.test', AUDIENCE] })),
      EXPECTED,
    );
    assert.ok(r.ok);
  });
});

describe('access token verification: algorithm and key attacks', () => {
  test('case=alg none is refused', async () => {
    const token = `${b64({ alg: 'none', typ: 'at+jwt', kid: keys.get('RS256')!.kid })}.${b64(baseClaims())}.`;
    assertRefused(await fixture().verifier.verify(token, EXPECTED), 'alg_not_allowed');
  });

  test('case=HS256 keyed with the published public key bytes (key confusion) is refused', async () => {
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const m = keys.get(alg)!;
      const spki = createPublicKey(privateKeyFromPkcs8(m.privatePkcs8)).export({
        type: 'spki',
        format: 'pem',
      });
      for (const secret of [Buffer.from(spki), Buffer.from(JSON.stringify(m.publicJwk))]) {
        const token = await new SignJWT(baseClaims())
          .setProtectedHeader({ alg: 'HS256', kid: m.kid, typ: 'at+jwt' })
          .sign(new Uint8Array(secret));
        assertRefused(await fixture().verifier.verify(token, EXPECTED), 'alg_not_allowed');
      }
    }
  });

  test('case=algorithms outside the allowlist (RS512, ES384, Ed25519 spelling) are refused', async () => {
    for (const alg of ['RS512', 'ES384', 'Ed25519', 'HS512', 'NONE']) {
      const token = `${b64({ alg, typ: 'at+jwt', kid: 'k' })}.${b64(baseClaims())}.c2ln`;
      assertRefused(await fixture().verifier.verify(token, EXPECTED), 'alg_not_allowed');
    }
  });

  test('case=a kid not in the set, or no kid at all, is refused', async () => {
    const { verifier } = fixture();
    assertRefused(
      await verifier.verify(await forge('ES256', baseClaims(), { kid: 'nope' }), EXPECTED),
      'unknown_key',
    );
    assertRefused(
      await verifier.verify(await forge('ES256', baseClaims(), { kid: undefined }), EXPECTED),
      'unknown_key',
    );
  });

  test('case=a published key is bound to its algorithm (RS256 header with a PS256 key)', async () => {
    const ps = keys.get('PS256')!;
    const token = await new SignJWT(baseClaims())
      .setProtectedHeader({ alg: 'RS256', kid: ps.kid, typ: 'at+jwt' })
      .sign(privateKeyFromPkcs8(ps.privatePkcs8));
    assertRefused(await fixture().verifier.verify(token, EXPECTED), 'unknown_key');
  });

  test('case=an embedded jwk header naming a published kid does not supply the key', async () => {
    const attacker = await generateKeyPair('ES256', { extractable: true });
    const token = await new SignJWT(baseClaims())
      .setProtectedHeader({
        alg: 'ES256',
        kid: keys.get('ES256')!.kid,
        typ: 'at+jwt',
        jwk: await exportJWK(attacker.publicKey),
      })
      .sign(attacker.privateKey);
    assertRefused(await fixture().verifier.verify(token, EXPECTED), 'bad_signature');
  });

  test('case=tampered payload or signature is refused', async () => {
    const { verifier } = fixture();
    const { token } = await signAccessToken(userInput(), signerOf(keys.get('RS256')!), T0);
    const [h, , s] = token.split('.');
    const widened = `${h}.${b64(baseClaims({ scope: 'realm.admin realm.owner' }))}.${s}`;
    assertRefused(await verifier.verify(widened, EXPECTED), 'bad_signature');
    const flipped = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BA' : 'AA'}`;
    assertRefused(await verifier.verify(flipped, EXPECTED), 'bad_signature');
  });

  test('case=a retired key that is no longer published stops verifying', async () => {
    const f = fixture();
    const old = keys.get('ES256')!;
    const { token } = await signAccessToken(userInput(), signerOf(old), T0);
    assert.ok((await f.verifier.verify(token, EXPECTED)).ok);
    f.keySets.publish([...keys.values()].filter((m) => m !== old).map((m) => m.publicJwk));
    assertRefused(await f.verifier.verify(token, EXPECTED), 'unknown_key');
  });

  test('case=an unknown realm has no keys', async () => {
    const { token } = await signAccessToken(userInput(), signerOf(keys.get('ES256')!), T0);
    assertRefused(await fixture().verifier.verify(token, { ...EXPECTED, realmName: 'other' }), 'unknown_key');
  });

  test('case=a key store fault is not an invalid token: it throws', async () => {
    const verifier = new AccessTokenVerifier({
      keySets: { publishedKeySet: async () => Promise.reject(new Error('db down')) },
      clock: { now: () => T0 },
      clockSkewMs: SKEW_MS,
      maxTokenBytes: MAX_TOKEN_BYTES,
    });
    await assert.rejects(verifier.verify(await forge('ES256', baseClaims()), EXPECTED), /db down/);
  });
});

describe('access token verification: type, audience, issuer, confirmation', () => {
  test('case=typ must be at+jwt, any ASCII case, application/ prefix optional', async () => {
    const { verifier } = fixture();
    for (const typ of ['at+jwt', 'AT+JWT', 'application/at+jwt', 'Application/At+Jwt']) {
      assert.ok((await verifier.verify(await forge('ES256', baseClaims(), { typ }), EXPECTED)).ok, typ);
    }
    for (const typ of [
      'JWT',
      'jwt',
      'dpop+jwt',
      'at+jwt ',
      'application/jwt',
      'application/at+jwt;x=1',
      undefined,
    ]) {
      assertRefused(
        await verifier.verify(await forge('ES256', baseClaims(), { typ }), EXPECTED),
        'wrong_typ',
      );
    }
    assert.equal(isAccessTokenTyp('\u0430t+jwt'), false); // Cyrillic a
  });

  test('case=an ID token (typ JWT) is not an access token', async () => {
    const token = await forge('RS256', baseClaims({ aud: AUDIENCE, nonce: 'n' }), { typ: 'JWT' });
    assertRefused(await fixture().verifier.verify(token, EXPECTED), 'wrong_typ');
  });

  test('case=wrong audience and wrong issuer', async () => {
    const { verifier } = fixture();
    const { token } = await signAccessToken(userInput(), signerOf(keys.get('PS256')!), T0);
    assertRefused(
      await verifier.verify(token, { ...EXPECTED, audience: `${AUDIENCE}/me` }),
      'wrong_audience',
    );
    assertRefused(await verifier.verify(token, { ...EXPECTED, issuer: `${ISSUER}x` }), 'wrong_issuer');
    const other = await forge('PS256', baseClaims({ aud: ['https://a.example.test'] }));
    assertRefused(await verifier.verify(other, EXPECTED), 'wrong_audience');
  });

  test('case=an aud array of the resource and UserInfo verifies for either, and names the resource', async () => {
    const { verifier } = fixture();
    const userinfo = `${ISSUER}/oauth/userinfo`;
    const signer = signerOf(keys.get('ES256')!);
    const { token, claims } = await signAccessToken(
      userInput({ extraAudiences: [userinfo], scopes: ['openid', 'realm.admin'] }),
      signer,
      T0,
    );
    assert.deepEqual(claims.aud, [AUDIENCE, userinfo]);
    assert.ok((await verifier.verify(token, EXPECTED)).ok);
    assert.ok((await verifier.verify(token, { ...EXPECTED, audience: userinfo })).ok);
    const own = await verifier.verifyOwnAudience(token, { realmName: REALM, issuer: ISSUER });
    assert.ok(own.ok);
    assert.deepEqual(own.token.audiences, [AUDIENCE, userinfo]);
    // Any other array is not one of ours: no audience is guessed from it.
    for (const aud of [
      [AUDIENCE, 'https://b.example.test'],
      [userinfo, userinfo],
      [AUDIENCE, userinfo, userinfo],
      [AUDIENCE, `${ISSUER}x/oauth/userinfo`],
    ]) {
      const forged = await forge('ES256', baseClaims({ aud }));
      assertRefused(
        await verifier.verifyOwnAudience(forged, { realmName: REALM, issuer: ISSUER }),
        'invalid_claims',
        'aud',
      );
    }
  });

  test('case=any cnf is refused by plain bearer verification', async () => {
    const { verifier } = fixture();
    const signer = signerOf(keys.get('EdDSA')!);
    for (const cnf of [{ jkt: JKT }, { 'x5t#S256': JKT }] as const) {
      const { token } = await signAccessToken(userInput({ cnf }), signer, T0);
      assertRefused(await verifier.verify(token, EXPECTED), 'sender_constrained');
    }
    for (const cnf of [null, {}, 'x']) {
      assertRefused(
        await verifier.verify(await forge('EdDSA', baseClaims({ cnf })), EXPECTED),
        'sender_constrained',
      );
    }
  });

  test('case=a caller that proves possession itself gets the cnf; a malformed one is refused', async () => {
    const { verifier } = fixture();
    const signer = signerOf(keys.get('EdDSA')!);
    const asProver = { ...EXPECTED, senderConstrained: true };
    for (const cnf of [{ jkt: JKT }, { 'x5t#S256': JKT }] as const) {
      const { token } = await signAccessToken(userInput({ cnf }), signer, T0);
      const r = await verifier.verify(token, asProver);
      assert.ok(r.ok, JSON.stringify(r));
      assert.deepEqual(r.token.cnf, cnf);
    }
    const plain = await verifier.verify((await signAccessToken(userInput({}), signer, T0)).token, asProver);
    assert.ok(plain.ok);
    assert.equal(plain.token.cnf, null, 'the caller refuses an unbound token under its scheme');
    for (const cnf of [null, {}, 'x', { jkt: JKT, 'x5t#S256': JKT }, { jkt: '' }]) {
      assertRefused(
        await verifier.verify(await forge('EdDSA', baseClaims({ cnf })), asProver),
        'invalid_claims',
        'cnf',
      );
    }
  });
});

describe('access token verification: times and clock skew', () => {
  test('case=expiry: accepted up to skew past exp, refused from exp + skew', async () => {
    const f = fixture();
    const { token, claims } = await signAccessToken(userInput(), signerOf(keys.get('ES256')!), T0);
    const expMs = claims.exp * 1000;
    f.setNow(new Date(expMs - 1));
    assert.ok((await f.verifier.verify(token, EXPECTED)).ok);
    f.setNow(new Date(expMs + SKEW_MS - 1));
    assert.ok((await f.verifier.verify(token, EXPECTED)).ok, 'within skew');
    f.setNow(new Date(expMs + SKEW_MS));
    assertRefused(await f.verifier.verify(token, EXPECTED), 'expired');
    f.setNow(new Date(expMs + 3_600_000));
    assertRefused(await f.verifier.verify(token, EXPECTED), 'expired');
  });

  test('case=future iat: within skew accepted, beyond refused', async () => {
    const { verifier } = fixture();
    const within = await forge('ES256', baseClaims({ iat: T0_S + 60, exp: T0_S + 360 }));
    assert.ok((await verifier.verify(within, EXPECTED)).ok);
    const beyond = await forge('ES256', baseClaims({ iat: T0_S + 61, exp: T0_S + 361 }));
    assertRefused(await verifier.verify(beyond, EXPECTED), 'issued_in_future');
  });

  test('case=future nbf: within skew accepted, beyond refused', async () => {
    const { verifier } = fixture();
    assert.ok((await verifier.verify(await forge('ES256', baseClaims({ nbf: T0_S + 60 })), EXPECTED)).ok);
    const beyond = await forge('ES256', baseClaims({ nbf: T0_S + 61 }));
    assertRefused(await verifier.verify(beyond, EXPECTED), 'not_yet_valid');
  });

  test('case=exp, iat and nbf must be numbers', async () => {
    const { verifier } = fixture();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ exp: undefined }, 'exp'],
      [{ exp: String(T0_S + 300) }, 'exp'],
      [{ iat: undefined }, 'iat'],
      [{ iat: null }, 'iat'],
      [{ nbf: 'soon' }, 'nbf'],
    ];
    for (const [over, claim] of cases) {
      assertRefused(
        await verifier.verify(await forge('ES256', baseClaims(over)), EXPECTED),
        'invalid_claims',
        claim,
      );
    }
  });
});

describe('access token verification: size and shape', () => {
  test('case=a token over limits.max_token_bytes is refused before any key lookup', async () => {
    const token = await forge('ES256', baseClaims({ pad: 'x'.repeat(400) }));
    const exact = fixture(Buffer.byteLength(token));
    assert.ok((await exact.verifier.verify(token, EXPECTED)).ok);
    const small = fixture(Buffer.byteLength(token) - 1);
    assertRefused(await small.verifier.verify(token, EXPECTED), 'oversized');
    assert.equal(small.keySets.calls, 0);
    const huge = await forge('ES256', baseClaims({ pad: 'x'.repeat(9000) }));
    assertRefused(await fixture().verifier.verify(huge, EXPECTED), 'oversized');
  });

  test('case=malformed compact serializations', async () => {
    const { verifier, keySets } = fixture();
    const valid = await forge('ES256', baseClaims());
    const [h, p, s] = valid.split('.');
    const bad = [
      '',
      'abc',
      `${h}.${p}`,
      `${h}.${p}.${s}.x`,
      `${h}.${p}.${s}=`,
      `${h}..${s}`,
      `${Buffer.from('{"alg":').toString('base64url')}.${p}.${s}`,
      ` ${valid}`,
      `${valid}\n`,
    ];
    for (const t of bad) assertRefused(await verifier.verify(t, EXPECTED), 'malformed');
    assertRefused(await verifier.verify(42 as unknown as string, EXPECTED), 'malformed');
    assert.equal(keySets.calls, 0);
  });

  test('case=a signed payload that is not a JSON object is refused', async () => {
    const { verifier } = fixture();
    const m = keys.get('ES256')!;
    for (const body of ['not json', '[1,2]', '"s"', 'null', '\xff']) {
      const token = await new CompactSign(new TextEncoder().encode(body))
        .setProtectedHeader({ alg: 'ES256', kid: m.kid, typ: 'at+jwt' })
        .sign(privateKeyFromPkcs8(m.privatePkcs8));
      assertRefused(await verifier.verify(token, EXPECTED), 'malformed');
    }
  });

  test('case=an unknown critical header is refused', async () => {
    // jose will not produce this, so sign by hand (Ed25519 needs no digest or signature encoding).
    const m = keys.get('EdDSA')!;
    const input = `${b64({ alg: 'EdDSA', kid: m.kid, typ: 'at+jwt', crit: ['x-unknown'], 'x-unknown': 1 })}.${b64(baseClaims())}`;
    const sig = sign(null, Buffer.from(input), privateKeyFromPkcs8(m.privatePkcs8)).toString('base64url');
    const token = `${input}.${sig}`;
    assertRefused(await fixture().verifier.verify(token, EXPECTED), 'malformed');
  });

  test('case=the jose key set is reused while the key store returns the same body', async () => {
    const f = fixture();
    const token = await forge('RS256', baseClaims());
    for (let i = 0; i < 3; i++) assert.ok((await f.verifier.verify(token, EXPECTED)).ok);
    assert.equal(f.keySets.calls, 3);
  });
});

describe('access token claim checks (pure)', () => {
  const header = { alg: 'ES256', kid: 'k1', typ: 'at+jwt' };
  const check = (payload: unknown, h: Record<string, unknown> = header) =>
    checkAccessTokenClaims(h, payload, { issuer: ISSUER, audience: AUDIENCE }, T0, SKEW_MS);

  const table: Array<[string, Record<string, unknown>, string, string?]> = [
    ['sub missing', { sub: undefined }, 'invalid_claims', 'sub'],
    ['sub empty', { sub: '' }, 'invalid_claims', 'sub'],
    ['jti missing', { jti: undefined }, 'invalid_claims', 'jti'],
    ['client_id a number', { client_id: 7 }, 'invalid_claims', 'client_id'],
    ['aud empty array', { aud: [] }, 'invalid_claims', 'aud'],
    ['aud with a number', { aud: [AUDIENCE, 1] }, 'invalid_claims', 'aud'],
    ['scope empty string', { scope: '' }, 'invalid_claims', 'scope'],
    ['scope double space', { scope: 'a  b' }, 'invalid_claims', 'scope'],
    ['scope an array', { scope: ['a'] }, 'invalid_claims', 'scope'],
    ['auth_time a string', { auth_time: '1' }, 'invalid_claims', 'auth_time'],
    ['amr a string', { amr: 'pwd' }, 'invalid_claims', 'amr'],
    ['acr empty', { acr: '' }, 'invalid_claims', 'acr'],
    ['sid a number', { sid: 1 }, 'invalid_claims', 'sid'],
    ['org_id null', { org_id: null }, 'invalid_claims', 'org_id'],
    ['act without sub', { act: { act: { sub: 'x' } } }, 'invalid_claims', 'act'],
    ['grant_client_id empty', { grant_client_id: '' }, 'invalid_claims', 'grant_client_id'],
    ['support_grant_id not a string', { support_grant_id: 7 }, 'invalid_claims', 'support_grant_id'],
    ['iss missing', { iss: undefined }, 'wrong_issuer'],
  ];
  for (const [name, over, reason, claim] of table) {
    test(`case=${name}`, () => assertRefused(check(baseClaims(over)), reason, claim));
  }

  test('case=nested act within the depth bound is kept; too deep is refused', () => {
    let act: Record<string, unknown> = { sub: 'c0' };
    for (let i = 1; i < 8; i++) act = { sub: `c${i}`, act };
    const ok = check(baseClaims({ act }));
    assert.ok(ok.ok);
    assertRefused(check(baseClaims({ act: { sub: 'c8', act } })), 'invalid_claims', 'act');
  });

  test('case=the header is checked again when called on its own', () => {
    assertRefused(check(baseClaims(), { ...header, alg: 'HS256' }), 'alg_not_allowed');
    assertRefused(check(baseClaims(), { ...header, kid: undefined }), 'unknown_key');
  });
});

describe('access token verification: remembered signatures', () => {
  test('case=a verified token stops verifying once its key leaves the published set', async () => {
    const f = fixture();
    const m = keys.get('ES256')!;
    const { token } = await signAccessToken(userInput(), signerOf(m), T0);
    assert.equal((await f.verifier.verify(token, EXPECTED)).ok, true);
    assert.equal(
      (await f.verifier.verify(token, EXPECTED)).ok,
      true,
      'the second call uses the remembered signature',
    );
    f.keySets.publish([...keys.values()].filter((k) => k.kid !== m.kid).map((k) => k.publicJwk));
    assertRefused(await f.verifier.verify(token, EXPECTED), 'unknown_key');
  });

  test('case=a remembered signature still gets its claims judged: time, audience, issuer', async () => {
    const f = fixture();
    const { token } = await signAccessToken(userInput(), signerOf(keys.get('RS256')!), T0);
    assert.equal((await f.verifier.verify(token, EXPECTED)).ok, true);
    assertRefused(
      await f.verifier.verify(token, { ...EXPECTED, audience: 'https://other.example.test' }),
      'wrong_audience',
    );
    assertRefused(
      await f.verifier.verify(token, { ...EXPECTED, issuer: 'https://evil.example.test' }),
      'wrong_issuer',
    );
    f.setNow(new Date(T0.getTime() + 300_000 + SKEW_MS));
    assertRefused(await f.verifier.verify(token, EXPECTED), 'expired');
  });

  test('case=a token with a tampered payload is not taken for a remembered one', async () => {
    const f = fixture();
    const { token } = await signAccessToken(userInput(), signerOf(keys.get('RS256')!), T0);
    assert.equal((await f.verifier.verify(token, EXPECTED)).ok, true);
    const [h, , sig] = token.split('.');
    const tampered = `${h}.${b64(baseClaims({ sub: 'usr_mallory' }))}.${sig}`;
    assertRefused(await f.verifier.verify(tampered, EXPECTED), 'bad_signature');
  });
});
