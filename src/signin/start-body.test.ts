import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeUtf8DroppingInvalid, dropLoneSurrogateEscapes } from './start-body.ts';

describe('start body reader', () => {
  test('drops escapes of unpaired surrogates inside strings only', () => {
    const cases: [string, string][] = [
      ['{"a":"x\\ud800y"}', '{"a":"xy"}'],
      ['{"a":"x\\udc00y"}', '{"a":"xy"}'],
      ['{"a":"\\ud83d\\ude00"}', '{"a":"\\ud83d\\ude00"}'],
      ['{"a":"\\ud83d\\ud83d\\ude00"}', '{"a":"\\ud83d\\ude00"}'],
      ['{"a":"\\ude00\\ud83d"}', '{"a":""}'],
      ['{"a":"\\\\ud800"}', '{"a":"\\\\ud800"}'],
      ['{"a":"\\"\\ud800"}', '{"a":"\\""}'],
      ['{"a\\uD800b":"\\u0041"}', '{"ab":"\\u0041"}'],
      ['{"a":"\\u00e9\\uDBFF"}', '{"a":"\\u00e9"}'],
      ['["\\ud800", 1]', '["", 1]'],
      ['{"a":"plain"}', '{"a":"plain"}'],
    ];
    for (const [input, expected] of cases) assert.equal(dropLoneSurrogateEscapes(input), expected, input);
  });

  test('drops byte sequences that are not UTF-8 and keeps the rest', () => {
    const cases: [number[], string][] = [
      [[0x61, 0xff, 0x62], 'ab'],
      [[0x61, 0xc3, 0xa9, 0x62], 'aéb'],
      [[0x61, 0xc3, 0x62], 'ab'],
      [[0xc0, 0xaf], ''], // overlong slash
      [[0xed, 0xa0, 0x80, 0x61], 'a'], // encoded surrogate
      [[0xf4, 0x90, 0x80, 0x80], ''], // above U+10FFFF
      [[0xf0, 0x9f, 0x98, 0x80], '😀'],
      [[0xe2, 0x82], ''],
      [[0xef, 0xbf, 0xbd], '\ufffd'],
    ];
    for (const [bytes, expected] of cases) {
      assert.equal(decodeUtf8DroppingInvalid(Uint8Array.from(bytes)), expected, JSON.stringify(bytes));
    }
  });
});
