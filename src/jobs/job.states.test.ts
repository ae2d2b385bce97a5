import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { downloadFormOf, retryDelayMs } from './job.states.ts';
import { idempotencyKeyOf } from './job-requests.ts';

describe('jobs › pure rules', () => {
  test('case=download form follows the format (spec doc 2, download rules)', () => {
    assert.deepEqual(downloadFormOf('ndjson'), {
      contentType: 'application/x-ndjson',
      filename: 'export.ndjson',
    });
    assert.deepEqual(downloadFormOf('json'), { contentType: 'application/json', filename: 'export.json' });
  });

  test('case=retry backoff doubles from 30 s and stops at an hour', () => {
    assert.deepEqual([1, 2, 3, 4].map(retryDelayMs), [30_000, 60_000, 120_000, 240_000]);
    assert.equal(retryDelayMs(20), 3_600_000);
  });

  test('case=Idempotency-Key is absent, or 1..255 printable ASCII characters without spaces', () => {
    assert.equal(idempotencyKeyOf({}), null);
    assert.equal(
      idempotencyKeyOf({ 'idempotency-key': '0f8fad5b-d9cb-469f-a165-70867728950e' }),
      '0f8fad5b-d9cb-469f-a165-70867728950e',
    );
    for (const bad of ['', 'a b', 'x'.repeat(256), 'caf\u00e9', ['a', 'b']])
      assert.throws(() => idempotencyKeyOf({ 'idempotency-key': bad }), /Idempotency-Key/, String(bad));
  });
});
