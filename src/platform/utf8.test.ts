import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cutUtf8 } from './utf8.ts';

test('cutUtf8 keeps whole characters within the byte limit', () => {
  assert.equal(cutUtf8('abc', 2), 'ab');
  assert.equal(cutUtf8('aé', 2), 'a'); // é is two bytes
  assert.equal(cutUtf8('aé', 3), 'aé');
  assert.equal(cutUtf8('😀x', 3), ''); // four-byte character never split
  assert.equal(cutUtf8('😀x', 5), '😀x');
});

test('cutUtf8 drops lone surrogates instead of failing', () => {
  assert.equal(cutUtf8('a\ud800b\udc00c', 10), 'abc');
  assert.equal(Buffer.byteLength(cutUtf8('é'.repeat(300), 254)), 254);
});
