import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TurnBatch } from './turn-batch.ts';

test('turn batch: the askers of one turn share one load, sent after they all asked', async () => {
  const loads: string[][] = [];
  let version = 1;
  const batch = new TurnBatch<number>(async (keys) => {
    loads.push(keys);
    return new Map(keys.filter((k) => k !== 'unknown').map((k) => [k, version]));
  });
  const first = [batch.get('a'), batch.get('b'), batch.get('a'), batch.get('unknown')];
  version = 2; // a change made after the askers asked, before the load runs, is seen by all
  assert.deepEqual(await Promise.all(first), [2, 2, 2, undefined]);
  assert.deepEqual(loads, [['a', 'b', 'unknown']]);
  assert.equal(await batch.get('a'), 2, 'a later turn loads again');
  assert.equal(loads.length, 2);
});

test('turn batch: a failed load fails every asker of its turn, and the next turn loads afresh', async () => {
  let fail = true;
  const batch = new TurnBatch<string>(async (keys) => {
    if (fail) throw new Error('database down');
    return new Map(keys.map((k) => [k, 'ok']));
  });
  const asked = [batch.get('a'), batch.get('b')];
  for (const p of asked) await assert.rejects(p, /database down/);
  fail = false;
  assert.equal(await batch.get('a'), 'ok');
});
