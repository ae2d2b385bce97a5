import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newUserCode, normalizeUserCode } from './user-code.ts';

test('a new user code is XXXX-XXXX of the unambiguous alphabet and reads back', () => {
  for (let i = 0; i < 50; i++) {
    const code = newUserCode();
    assert.match(code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(normalizeUserCode(code), code.replace('-', ''));
  }
});

test('typed codes forgive case, spaces and dashes, and refuse other letters or lengths', () => {
  assert.equal(normalizeUserCode(' bcdf-ghjk '), 'BCDFGHJK');
  assert.equal(normalizeUserCode('BCDF GHJK'), 'BCDFGHJK');
  assert.equal(normalizeUserCode('BCDF-GHJA'), null);
  assert.equal(normalizeUserCode('BCDF-GHJ'), null);
  assert.equal(normalizeUserCode('BCDF-GHJKL'), null);
});
