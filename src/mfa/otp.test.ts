import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { encodeBase32 } from './base32.ts';
import { hotp, totpAt, totpStep, verifyHotp, verifyTotp } from './otp.ts';
import { newTotpSecret } from './otpauth-uri.ts';

const rfcKey = Buffer.from('12345678901234567890', 'ascii');

// RFC 4226 Appendix D.
const hotpVectors = [
  '755224',
  '287082',
  '359152',
  '969429',
  '338314',
  '254676',
  '287922',
  '162583',
  '399871',
  '520489',
];

// RFC 6238 Appendix B, SHA-1 rows, 8 digits.
const totpVectors: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

function hasOathtool(): boolean {
  try {
    execFileSync('oathtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const stepMs = 30_000;
const now = 1_700_000_000_000; // a fixed instant; the step boundary is not at `now`
const step = totpStep(now);

describe('hotp', () => {
  for (const [counter, code] of hotpVectors.entries()) {
    test(`case=RFC 4226 Appendix D counter ${counter}`, () => {
      assert.equal(hotp(rfcKey, counter), code);
      assert.equal(hotp(rfcKey, BigInt(counter)), code);
    });
  }

  test('case=rejects counters and digit counts outside the RFC', () => {
    assert.throws(() => hotp(rfcKey, -1), RangeError);
    assert.throws(() => hotp(rfcKey, 2 ** 53), RangeError);
    assert.throws(() => hotp(rfcKey, 1n << 64n), RangeError);
    assert.throws(() => hotp(rfcKey, 0, 5), RangeError);
    assert.throws(() => hotp(rfcKey, 0, 9), RangeError);
    assert.equal(hotp(rfcKey, (1n << 64n) - 1n).length, 6);
  });
});

describe('totp', () => {
  for (const [seconds, code] of totpVectors) {
    test(`case=RFC 6238 Appendix B SHA-1 at ${seconds}s`, () => {
      assert.equal(totpAt(rfcKey, totpStep(seconds * 1000), 8), code);
    });
  }

  test('case=steps are 30 s wide and floor the time', () => {
    assert.deepEqual(
      [0, 29_999, 30_000, 59_999, 60_000].map((ms) => totpStep(ms)),
      [0, 0, 1, 1, 2],
    );
    assert.equal(totpStep(120_000, 60), 2);
  });

  // The RFC vectors are the tests above; this one needs its oracle and is skipped without it.
  const oathtoolMissing = hasOathtool()
    ? false
    : 'oathtool is not on PATH (apt-get install -y --no-install-recommends oathtool)';
  test('case=agrees with an independent implementation (oathtool)', { skip: oathtoolMissing }, (t) => {
    const secrets = [
      rfcKey,
      newTotpSecret(),
      newTotpSecret(),
      Buffer.alloc(20),
      newTotpSecret().subarray(0, 10),
    ];
    const times = [59, 1111111109, 1234567890, 1_700_000_000, 2_000_000_000, Math.floor(Date.now() / 1000)];
    let compared = 0;
    for (const secret of secrets) {
      const b32 = encodeBase32(secret);
      for (const seconds of times) {
        for (const digits of [6, 8]) {
          const theirs = execFileSync(
            'oathtool',
            ['--totp', '-d', String(digits), '-b', b32, '-N', `@${seconds}`],
            {
              encoding: 'utf8',
            },
          ).trim();
          assert.equal(totpAt(secret, totpStep(seconds * 1000), digits), theirs, `${b32} @${seconds}`);
          compared++;
        }
      }
      // HOTP: counters 0..4 in one call.
      const theirs = execFileSync('oathtool', ['-b', b32, '-c', '0', '-w', '4'], { encoding: 'utf8' })
        .trim()
        .split('\n');
      assert.deepEqual(
        theirs,
        [0, 1, 2, 3, 4].map((c) => hotp(secret, c)),
      );
      compared += theirs.length;
    }
    t.diagnostic(`oathtool agreed on ${compared} codes`);
  });
});

describe('verifyTotp', () => {
  const codeAt = (offset: number) => totpAt(rfcKey, step + offset);

  test('case=the current step and one step either side are accepted with window 1', () => {
    for (const offset of [-1, 0, 1]) {
      assert.deepEqual(verifyTotp(rfcKey, codeAt(offset), now, {}), { ok: true, step: step + offset });
    }
  });

  test('case=two steps away is refused with window 1', () => {
    for (const offset of [-2, 2]) {
      assert.deepEqual(verifyTotp(rfcKey, codeAt(offset), now, { window: 1 }), {
        ok: false,
        reason: 'invalid',
      });
    }
  });

  test('case=window 0 accepts only the current step; a larger window widens it', () => {
    assert.equal(verifyTotp(rfcKey, codeAt(0), now, { window: 0 }).ok, true);
    assert.equal(verifyTotp(rfcKey, codeAt(1), now, { window: 0 }).ok, false);
    assert.equal(verifyTotp(rfcKey, codeAt(-2), now, { window: 2 }).ok, true);
  });

  test('case=window edges follow the step boundary of now', () => {
    const boundary = (step + 1) * stepMs;
    assert.equal(verifyTotp(rfcKey, codeAt(-1), boundary - 1, {}).ok, true);
    assert.equal(verifyTotp(rfcKey, codeAt(-1), boundary, {}).ok, false);
  });

  test('case=the same step is refused once used', () => {
    const first = verifyTotp(rfcKey, codeAt(0), now, { lastUsedStep: null });
    assert.deepEqual(first, { ok: true, step });
    assert.deepEqual(verifyTotp(rfcKey, codeAt(0), now, { lastUsedStep: step }), {
      ok: false,
      reason: 'replayed',
    });
    assert.deepEqual(verifyTotp(rfcKey, codeAt(0), now + stepMs, { lastUsedStep: step }), {
      ok: false,
      reason: 'replayed',
    });
  });

  test('case=an older step after a newer one is refused', () => {
    assert.deepEqual(verifyTotp(rfcKey, codeAt(1), now, {}), { ok: true, step: step + 1 });
    for (const offset of [-1, 0]) {
      assert.deepEqual(verifyTotp(rfcKey, codeAt(offset), now, { lastUsedStep: step + 1 }), {
        ok: false,
        reason: 'replayed',
      });
    }
  });

  test('case=a newer step after an older one is accepted', () => {
    assert.deepEqual(verifyTotp(rfcKey, codeAt(1), now, { lastUsedStep: step - 1 }), {
      ok: true,
      step: step + 1,
    });
  });

  test('case=wrong length or non-digits are invalid', () => {
    const good = codeAt(0);
    const bad = [
      '',
      good.slice(1),
      `${good}0`,
      ` ${good}`,
      `${good.slice(0, 5)}a`,
      `${good.slice(0, 3)} ${good.slice(3)}`,
      '\uff10'.repeat(6), // full-width zeros
      '+12345',
      '-12345',
      '1e5000',
    ];
    for (const code of bad)
      assert.deepEqual(verifyTotp(rfcKey, code, now, {}), { ok: false, reason: 'invalid' }, code);
    assert.deepEqual(verifyTotp(rfcKey, '00000000', now, { digits: 8 }).ok, false);
  });

  test('case=codes with leading zeros keep them', () => {
    let s = 0;
    while (!totpAt(rfcKey, s).startsWith('0')) s++;
    const code = totpAt(rfcKey, s);
    assert.equal(code.length, 6);
    const at = s * stepMs;
    assert.deepEqual(verifyTotp(rfcKey, code, at, {}), { ok: true, step: s });
    assert.equal(verifyTotp(rfcKey, String(Number(code)), at, {}).ok, false);
    assert.deepEqual(verifyTotp(rfcKey, '07081804', 1111111109_000, { digits: 8 }), {
      ok: true,
      step: totpStep(1111111109_000),
    });
  });

  test('case=near the epoch no negative step is tried', () => {
    assert.deepEqual(verifyTotp(rfcKey, totpAt(rfcKey, 0), 0, {}), { ok: true, step: 0 });
  });
});

describe('verifyHotp', () => {
  test('case=accepts a code inside the look-ahead and moves past it', () => {
    assert.deepEqual(verifyHotp(rfcKey, hotpVectors[0]!, 0, 0), { ok: true, nextCounter: 1 });
    assert.deepEqual(verifyHotp(rfcKey, hotpVectors[3]!, 0, 3), { ok: true, nextCounter: 4 });
    assert.deepEqual(verifyHotp(rfcKey, hotpVectors[9]!, 5, 10), { ok: true, nextCounter: 10 });
  });

  test('case=refuses a code beyond the look-ahead', () => {
    assert.deepEqual(verifyHotp(rfcKey, hotpVectors[4]!, 0, 3), { ok: false });
  });

  test('case=is forward-only: used and older counters are refused', () => {
    assert.deepEqual(verifyHotp(rfcKey, hotpVectors[2]!, 3, 5), { ok: false });
    assert.deepEqual(verifyHotp(rfcKey, hotpVectors[0]!, 1, 10), { ok: false });
  });

  test('case=malformed codes are refused', () => {
    for (const code of ['', '75522', '7552244', '75522a', ' 755224']) {
      assert.deepEqual(verifyHotp(rfcKey, code, 0, 10), { ok: false }, code);
    }
  });
});
