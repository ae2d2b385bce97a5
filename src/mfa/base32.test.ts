import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Base32Error, decodeBase32, encodeBase32 } from './base32.ts';

// RFC 4648 section 10, shown here without padding (encodeBase32 never pads).
const vectors: [string, string][] = [
  ['', ''],
  ['f', 'MY'],
  ['fo', 'MZXQ'],
  ['foo', 'MZXW6'],
  ['foob', 'MZXW6YQ'],
  ['fooba', 'MZXW6YTB'],
  ['foobar', 'MZXW6YTBOI'],
];
const padded = ['', 'MY======', 'MZXQ====', 'MZXW6===', 'MZXW6YQ=', 'MZXW6YTB', 'MZXW6YTBOI======'];

describe('base32', () => {
  for (const [i, [plain, encoded]] of vectors.entries()) {
    test(`case=RFC 4648 vector ${JSON.stringify(plain)}`, () => {
      assert.equal(encodeBase32(Buffer.from(plain)), encoded);
      assert.equal(decodeBase32(encoded).toString(), plain);
      assert.equal(decodeBase32(padded[i]!).toString(), plain);
      assert.equal(decodeBase32(encoded.toLowerCase()).toString(), plain);
    });
  }

  test('case=decode(encode(x)) returns x', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        assert.deepEqual(new Uint8Array(decodeBase32(encodeBase32(bytes))), bytes);
      }),
      { numRuns: 500 },
    );
  });

  test('case=encode output is upper case, unpadded, within the alphabet', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        assert.match(encodeBase32(bytes), /^[A-Z2-7]*$/);
      }),
    );
  });

  test('case=spaces, mixed case and padding are accepted when decoding', () => {
    const secret = 'JBSWY3DPEHPK3PXP';
    const want = decodeBase32(secret);
    for (const form of [
      'jbsw y3dp ehpk 3pxp',
      'JbSwY3dPeHpK3pXp',
      ' JBSWY3DPEHPK3PXP ',
      'JBSWY3DPEHPK3PXP======',
    ]) {
      assert.deepEqual(decodeBase32(form), want, form);
    }
  });

  test('case=invalid input throws', () => {
    for (const bad of [
      'MZXW6YT0',
      'MZXW6YT1',
      'MZXW6YT8',
      'MZ!W6YTB',
      'MY==MZXQ',
      'MZXW-6YTB',
      'A',
      'ABC',
      'ABCDEF',
    ]) {
      assert.throws(() => decodeBase32(bad), Base32Error, bad);
    }
  });
});
