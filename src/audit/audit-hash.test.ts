// The canonical form audit content hashes use (docs/audit.md, "What is hashed"): the RFC 8785
// library against the RFC's own examples (sections 3.2.2 and 3.2.3, Appendix B), the same bytes
// as the form batches were sealed with before it, and one record's exact canonical text and hash.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { batchHash, contentHash, eventsHash, type HashedEventRow, jcs } from './audit-hash.ts';

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('audit hashing › RFC 8785', () => {
  test('case=the section 3.2.2 example: numbers, string escapes and literals, byte for byte', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        ' "literals": [null, true, false]}',
    );
    const expected =
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
      '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
    assert.equal(jcs(input), expected);
    // Section 3.2.4: the UTF-8 bytes of that text, as the RFC prints them.
    const rfcBytes = `
      7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
      75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
      5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
      65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
      5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
      30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`;
    assert.equal(hex(jcs(input)), rfcBytes.replace(/\s+/g, ''));
  });

  test('case=the section 3.2.3 example: members sorted by UTF-16 code units', () => {
    const input = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh",' +
        ' "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control",' +
        ' "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    );
    assert.equal(
      jcs(input),
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  test('case=Appendix B: IEEE 754 values and their canonical text; NaN and Infinity are errors', () => {
    const vectors: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    const double = (bits: string) => Buffer.from(bits, 'hex').readDoubleBE(0);
    for (const [bits, text] of vectors) assert.equal(jcs(double(bits)), text, bits);
    assert.throws(() => jcs(double('7fffffffffffffff')), /NaN/);
    assert.throws(() => jcs(double('7ff0000000000000')), /Infinity/);
  });
});

// The form batches were sealed with before RFC 8785 was named (kept here, frozen): members sorted
// with the default sort (UTF-16 code units), strings and numbers as JSON.stringify writes them.
function sealedBefore(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(sealedBefore).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${sealedBefore(o[k])}`).join(',')}}`;
}

const RECORD: HashedEventRow = {
  id: 'aud_01jd0000000000000000000000',
  realm_id: 'rlm_01jd0000000000000000000000',
  occurred_at: new Date('2026-11-22T13:53:20.725Z'),
  type: 'user.created',
  category: 'identity',
  outcome: 'success',
  actor_type: 'user',
  actor_id: 'usr_01jd0000000000000000000001',
  subject_type: 'user',
  subject_id: 'usr_01jd0000000000000000000002',
  target_type: null,
  target_id: null,
  org_id: null,
  correlation_id: 'req-1',
  signal: null,
  reason: 'Zoë asked',
  corrects_event_id: null,
  data: { via: 'admin', n: 1.5, list: [2, 'é'] },
};

describe('audit hashing › sealed batches keep verifying', () => {
  test('case=the library writes the same bytes as the earlier form for every JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'grapheme' }), (value) => {
        assert.equal(jcs(value), sealedBefore(value));
      }),
      { numRuns: 2000 },
    );
  });

  test('case=one record: its exact canonical text and content hash, and the batch hashes over it', () => {
    const text =
      '{"actor_id":"usr_01jd0000000000000000000001","actor_type":"user","category":"identity",' +
      '"corrects_event_id":null,"correlation_id":"req-1","data":{"list":[2,"é"],"n":1.5,"via":"admin"},' +
      '"id":"aud_01jd0000000000000000000000","occurred_at":"2026-11-22T13:53:20.725Z","org_id":null,' +
      '"outcome":"success","realm_id":"rlm_01jd0000000000000000000000","reason":"Zoë asked",' +
      '"signal":null,"subject_id":"usr_01jd0000000000000000000002","subject_type":"user",' +
      '"target_id":null,"target_type":null,"type":"user.created"}';
    assert.equal(contentHash(RECORD), sha256(text));
    const events = eventsHash([contentHash(RECORD), contentHash(RECORD)]);
    assert.equal(events, sha256(`${sha256(text)}\n${sha256(text)}`));
    assert.equal(
      batchHash({ seq: 2, previousHash: 'ab', eventsHash: events, eventCount: 2 }),
      sha256(`proudauth-audit-batch/1\n2\nab\n${events}\n2`),
    );
    assert.equal(
      batchHash({ seq: 1, previousHash: null, eventsHash: events, eventCount: 2 }),
      sha256(`proudauth-audit-batch/1\n1\n\n${events}\n2`),
    );
  });
});
