// PKCE S256 (RFC 7636 sections 4.1, 4.2, 4.6 and Appendix B).

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isCodeVerifier, isS256Challenge, s256Challenge, verifyS256 } from './pkce.ts';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 500);
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  test('RFC 7636 Appendix B vector', () => {
    assert.equal(s256Challenge(VERIFIER), CHALLENGE);
    assert.equal(verifyS256(VERIFIER, CHALLENGE), true);
  });

  test('a different verifier or challenge fails', () => {
    assert.equal(verifyS256(VERIFIER.slice(0, -1) + 'l', CHALLENGE), false);
    assert.equal(verifyS256(VERIFIER, CHALLENGE.slice(0, -1) + 'A'), false);
    assert.equal(verifyS256(CHALLENGE, CHALLENGE), false);
    assert.equal(verifyS256(VERIFIER, `${CHALLENGE}=`), false);
    assert.equal(verifyS256(VERIFIER, ''), false);
    assert.equal(verifyS256('', CHALLENGE), false);
  });

  const verifiers: Array<[string, boolean]> = [
    [VERIFIER, true],
    ['a'.repeat(43), true],
    ['a'.repeat(128), true],
    ['A-._~z09'.repeat(6), true],
    ['a'.repeat(42), false],
    ['a'.repeat(129), false],
    [`${'a'.repeat(42)}+`, false],
    [`${'a'.repeat(42)}/`, false],
    [`${'a'.repeat(42)}=`, false],
    [`${'a'.repeat(42)} `, false],
    [`${'a'.repeat(42)}\u00e9`, false],
  ];
  for (const [v, expected] of verifiers) {
    test(`isCodeVerifier(${v.length} chars ${JSON.stringify(v.slice(-3))}) -> ${expected}`, () => {
      assert.equal(isCodeVerifier(v), expected);
    });
  }

  const challenges: Array<[string, boolean]> = [
    [CHALLENGE, true],
    ['A'.repeat(43), true],
    [`${'_'.repeat(42)}w`, true],
    ['A'.repeat(42), false],
    ['A'.repeat(44), false],
    [`${CHALLENGE.slice(0, 42)}+`, false],
    [`${CHALLENGE.slice(0, 42)}/`, false],
    [`${'A'.repeat(42)}B`, false],
    [`${'A'.repeat(42)}_`, false],
    [`${CHALLENGE}=`, false],
  ];
  for (const [c, expected] of challenges) {
    test(`isS256Challenge(${JSON.stringify(c)}) -> ${expected}`, () =>
      assert.equal(isS256Challenge(c), expected));
  }
  test('non-strings are refused', () => {
    assert.equal(isS256Challenge(undefined), false);
    assert.equal(isCodeVerifier(null), false);
  });

  test('every verifier verifies against its own digest and the digest is a valid challenge', () => {
    const verifier = fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/);
    fc.assert(
      fc.property(verifier, (v) => {
        const c = createHash('sha256').update(v).digest('base64url');
        assert.equal(isS256Challenge(c), true);
        assert.equal(verifyS256(v, c), true);
      }),
      { numRuns },
    );
  });

  test('every 32-byte digest encodes to an accepted challenge', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        assert.equal(isS256Challenge(Buffer.from(bytes).toString('base64url')), true);
      }),
      { numRuns },
    );
  });

  test('changing one character of the challenge or the verifier fails verification', () => {
    const verifier = fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/);
    fc.assert(
      fc.property(verifier, fc.nat(), fc.nat(), (v, i, j) => {
        const c = s256Challenge(v);
        const at = i % 43;
        const flipped = c.slice(0, at) + (c[at] === 'A' ? 'E' : 'A') + c.slice(at + 1);
        assert.equal(verifyS256(v, flipped), false);
        const vat = j % v.length;
        const other = v.slice(0, vat) + (v[vat] === 'a' ? 'b' : 'a') + v.slice(vat + 1);
        assert.equal(verifyS256(other, c), false);
      }),
      { numRuns },
    );
  });
});
