// Scope names (spec doc 1 ScopeName row, Limits) and the scope parameter (RFC 6749 section 3.3).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isScopeName, parseScopeParam, type ScopeParamRejection } from './scope.ts';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 500);

describe('isScopeName', () => {
  const good = [
    'openid',
    'a',
    'read:users',
    'https://api.example/read',
    "!#$%&'()*+,-./:;<=>?@[]^_`{|}~",
    'x'.repeat(128),
  ];
  const bad: unknown[] = [
    '',
    'x'.repeat(129),
    'a b',
    'a"b',
    'a\\b',
    'a\tb',
    'caf\u00e9',
    'a\u007f',
    'a\u0000',
    null,
    7,
  ];
  for (const s of good)
    test(`accepts ${JSON.stringify(s).slice(0, 60)}`, () => assert.equal(isScopeName(s), true));
  for (const s of bad)
    test(`refuses ${JSON.stringify(s)?.slice(0, 60)}`, () => assert.equal(isScopeName(s), false));

  test('agrees with the character-class definition', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 140 }), (s) => {
        const expected =
          s.length >= 1 &&
          s.length <= 128 &&
          [...s].every((c) => c >= '!' && c <= '~' && c !== '"' && c !== '\\');
        assert.equal(isScopeName(s), expected);
      }),
      { numRuns },
    );
  });
});

describe('parseScopeParam', () => {
  test('splits on single spaces and keeps the first of duplicates', () => {
    assert.deepEqual(parseScopeParam('openid profile email profile openid'), {
      ok: true,
      scopes: ['openid', 'profile', 'email'],
    });
    assert.deepEqual(parseScopeParam('openid'), { ok: true, scopes: ['openid'] });
  });

  const refused: Array<[string, ScopeParamRejection]> = [
    ['', 'empty'],
    [' ', 'invalid_delimiter'],
    [' openid', 'invalid_delimiter'],
    ['openid ', 'invalid_delimiter'],
    ['openid  profile', 'invalid_delimiter'],
    ['openid\tprofile', 'invalid'],
    ['openid\nprofile', 'invalid'],
    ['openid pro"file', 'invalid'],
    ['openid pro\\file', 'invalid'],
    ['openid caf\u00e9', 'invalid'],
    [`openid ${'x'.repeat(129)}`, 'invalid'],
    ['openid\u00a0profile', 'invalid'],
  ];
  for (const [s, reason] of refused) {
    test(`refuses ${JSON.stringify(s).slice(0, 60)}: ${reason}`, () => {
      assert.deepEqual(parseScopeParam(s), { ok: false, reason });
    });
  }

  test('the limit counts distinct names (50 by default)', () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
    assert.equal(parseScopeParam(names(50).join(' ')).ok, true);
    assert.deepEqual(parseScopeParam(names(51).join(' ')), { ok: false, reason: 'too_many' });
    assert.equal(parseScopeParam([...names(50), ...names(50)].join(' ')).ok, true);
    assert.deepEqual(parseScopeParam('a b c', 2), { ok: false, reason: 'too_many' });
    assert.equal(parseScopeParam('a b a', 2).ok, true);
  });

  test('round trip: joining distinct valid names parses back to them', () => {
    const name = fc.stringMatching(/^[\x21\x23-\x5b\x5d-\x7e]{1,20}$/);
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 50 }), (names) => {
        assert.deepEqual(parseScopeParam(names.join(' ')), { ok: true, scopes: names });
        assert.deepEqual(parseScopeParam([...names, ...names].join(' ')), { ok: true, scopes: names });
      }),
      { numRuns },
    );
  });
});
