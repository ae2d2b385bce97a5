import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { namedParams } from './named-params.ts';

describe('named parameters', () => {
  test('names become $1..$n in list order and values follow the same order', () => {
    const { p, count, values } = namedParams(['realm', 'user', 'now'] as const);
    assert.deepEqual([p.realm, p.user, p.now, count], ['$1', '$2', '$3', 3]);
    assert.deepEqual(values({ now: 'n', realm: 'r', user: 'u' }), ['r', 'u', 'n']);
  });
  test('a name listed twice is refused', () => {
    assert.throws(() => namedParams(['a', 'a']), /listed twice/);
  });
});
