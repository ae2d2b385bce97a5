import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  generateRecoveryCodes,
  normalizeRecoveryCode,
  RECOVERY_CODE_ALPHABET,
  recoveryCodeDigest,
} from './recovery-codes.ts';

const shape = new RegExp(`^[${RECOVERY_CODE_ALPHABET}]{5}-[${RECOVERY_CODE_ALPHABET}]{5}$`);

describe('recovery codes', () => {
  test('case=ten codes by default, or the count asked for', () => {
    assert.equal(generateRecoveryCodes().length, 10);
    assert.equal(generateRecoveryCodes(3).length, 3);
    assert.throws(() => generateRecoveryCodes(0), RangeError);
  });

  test('case=codes are xxxxx-xxxxx from the unambiguous alphabet', () => {
    for (const code of generateRecoveryCodes(100)) assert.match(code, shape);
    assert.doesNotMatch(RECOVERY_CODE_ALPHABET, /[01lo]/);
    assert.equal(new Set(RECOVERY_CODE_ALPHABET).size, RECOVERY_CODE_ALPHABET.length);
  });

  test('case=each code carries at least 50 bits', () => {
    const [code] = generateRecoveryCodes(1);
    const symbols = normalizeRecoveryCode(code!).length;
    assert.ok(symbols * Math.log2(RECOVERY_CODE_ALPHABET.length) >= 50);
  });

  test('case=codes are unique within and across sets', () => {
    const all = Array.from({ length: 20 }, () => generateRecoveryCodes(100)).flat();
    assert.equal(new Set(all).size, all.length);
  });

  test('case=every symbol of the alphabet turns up', () => {
    const seen = new Set(generateRecoveryCodes(100).join('').replace(/-/g, ''));
    assert.equal(seen.size, RECOVERY_CODE_ALPHABET.length);
  });

  test('case=formatting variants normalize and digest alike', () => {
    const code = 'abcde-fghjk';
    const digest = recoveryCodeDigest(code);
    for (const variant of [
      'abcdefghjk',
      'ABCDE-FGHJK',
      ' abcde fghjk ',
      'AbCdE--FgHjK',
      'ab-cd-ef-gh-jk',
      'abcde\tfghjk\n',
    ]) {
      assert.equal(normalizeRecoveryCode(variant), 'abcdefghjk', variant);
      assert.equal(recoveryCodeDigest(variant), digest, variant);
    }
    assert.notEqual(recoveryCodeDigest('abcde-fghjm'), digest);
  });

  test('case=only ASCII letters are folded', () => {
    assert.equal(normalizeRecoveryCode('İBCDE-FGHJK'), 'İbcdefghjk');
    assert.notEqual(recoveryCodeDigest('\uff41bcde-fghjk'), recoveryCodeDigest('abcde-fghjk'));
  });

  test('case=the digest is SHA-256 hex of the normalized code', () => {
    // printf abcdefghjk | sha256sum
    const want = '22f3f00d7f9cfe6eeefa9b71bdcb093a9080fcf4981d2dbf932648fa15a2d793';
    assert.equal(recoveryCodeDigest('ABCDE-FGHJK'), want);
    assert.equal(recoveryCodeDigest('abcdefghjk'), want);
  });
});
