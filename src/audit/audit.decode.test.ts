// The activity name rule of POST /activity-events (docs/audit.md, Application activity).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tryDecode } from '../platform/http/decode.ts';
import { ACTIVITY_NAME, decodeActivity } from './audit.decode.ts';

const VALID = ['invoice.approved', 'a', '0', 'order:shipped', 'x-y_z.1'];
// Each holds a letter, so an unanchored pattern would have let it through.
const INVALID = [
  'Bad Name!',
  'Invoice.approved',
  'invoice approved',
  '.invoice',
  '-a',
  'a\nb',
  'a/b',
  'ä',
  'a<b>',
];

describe('audit › activity names', () => {
  test('the pattern matches whole names only', () => {
    for (const name of VALID) assert.ok(ACTIVITY_NAME.test(name), name);
    for (const name of INVALID) assert.equal(ACTIVITY_NAME.test(name), false, name);
  });

  test('the decoder refuses what the pattern refuses, as a value error on activity', () => {
    for (const name of VALID) assert.ok(tryDecode(decodeActivity, { activity: name }).ok, name);
    for (const name of INVALID) {
      const r = tryDecode(decodeActivity, { activity: name });
      assert.deepEqual(r.ok ? [] : r.errors.map((e) => `${e.field}:${e.code}`), ['activity:pattern'], name);
    }
  });
});
