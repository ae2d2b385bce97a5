import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KeptCopies } from './kept-copies.ts';

test('kept copies: the one unused longest goes past the cap', () => {
  const kept = new KeptCopies<number>(2);
  kept.set('a', 1);
  kept.set('b', 2);
  assert.equal(kept.get('a'), 1, 'a is now the most recently used');
  kept.set('c', 3);
  assert.equal(kept.get('b'), undefined, 'b was unused longest');
  assert.equal(kept.get('a'), 1);
  assert.equal(kept.get('c'), 3);
  kept.set('a', 4);
  assert.equal(kept.get('a'), 4, 'a newer read replaces the copy');
  assert.equal(kept.size, 2);
});
