import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Problem } from './problem.ts';
import { foldMemberName, parseStrictJson } from './strict-json.ts';

/** Builds the expected value with null-prototype objects, as the parser returns them. */
function bare(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(bare);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, x] of Object.entries(v)) out[k] = bare(x);
  return out;
}

function refused(input: string | Uint8Array, detail: RegExp, maxDepth?: number): void {
  assert.throws(
    () => parseStrictJson(input, { maxDepth }),
    (e: unknown) => {
      assert.ok(e instanceof Problem, `expected a Problem, got ${String(e)}`);
      assert.equal(e.status, 400);
      assert.equal(e.code, 'invalid_request');
      assert.match(e.detail ?? '', detail);
      return true;
    },
  );
}

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

describe('parseStrictJson accepts RFC 8259 texts', () => {
  const cases: [string, unknown][] = [
    ['0', 0],
    ['-0', -0],
    ['0.0', 0],
    ['1.5e10', 1.5e10],
    ['-1.25E-3', -1.25e-3],
    ['1E+2', 100],
    ['123456789012345678901234567890', 1.2345678901234568e29],
    ['9007199254740993', 9007199254740992], // precision is the decoder's business, not the parser's
    ['1e308', 1e308],
    ['5e-324', 5e-324],
    ['1e-400', 0], // underflow is representable as 0, as JSON.parse does
    ['true', true],
    ['false', false],
    ['null', null],
    ['""', ''],
    ['"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\/\b\f\n\r\t'],
    ['"\\u00e9\\u00E9"', 'éé'],
    ['"\\u0000"', '\u0000'],
    ['"\\ud83d\\ude00"', '😀'],
    ['"é😀\u007f"', 'é😀\u007f'],
    [' \t\n\r[1, 2]\r\n ', [1, 2]],
    ['[]', []],
    ['{}', {}],
    ['{"a":1,"b":[true,null,{"c":"d"}]}', { a: 1, b: [true, null, { c: 'd' }] }],
    ['{"a":{"a":1},"b":{"a":2}}', { a: { a: 1 }, b: { a: 2 } }],
    ['[{"a":1},{"A":2}]', [{ a: 1 }, { A: 2 }]],
    ['{"k":1,"\\u212a":2}', { k: 1, '\u212a': 2 }], // Kelvin sign is not folded to k
    ['{"s":1,"\\u017f":2}', { s: 1, '\u017f': 2 }], // nor long s to s
    ['{"ss":1,"\u00df":2}', { ss: 1, ß: 2 }],
    ['{"":1}', { '': 1 }],
  ];
  for (const [input, expected] of cases) {
    test(`accepts ${JSON.stringify(input)}`, () => {
      assert.deepStrictEqual(parseStrictJson(input), bare(expected));
      assert.deepStrictEqual(parseStrictJson(new TextEncoder().encode(input)), bare(expected));
    });
  }
  test('keeps -0 distinct like JSON.parse', () => assert.ok(Object.is(parseStrictJson('-0'), -0)));
});

describe('parseStrictJson refuses', () => {
  const cases: [string, string, RegExp][] = [
    ['empty input', '', /^empty JSON text at offset 0$/],
    ['whitespace only', ' \n\t\r ', /^empty JSON text at offset 5$/],
    ['a BOM', '\ufeff{}', /^byte order mark is not allowed at offset 0$/],
    ['a duplicate', '{"a":1,"a":2}', /^duplicate member "a" at offset 7$/],
    ['a case-varied duplicate', '{"a":1,"A":2}', /^duplicate member "A" at offset 7$/],
    [
      'a longer case-varied duplicate',
      '{"redirect_uri":1,"Redirect_URI":2}',
      /duplicate member "Redirect_URI"/,
    ],
    ['an escaped duplicate', '{"\\u0061":1,"a":2}', /^duplicate member "a" at offset 12$/],
    ['an escaped upper-case duplicate', '{"a":1,"\\u0041":2}', /duplicate member "A"/],
    ['a solidus-escaped duplicate', '{"a/b":1,"a\\/b":2}', /duplicate member "a\/b"/],
    ['a nested duplicate', '{"x":{"a":1,"a":2}}', /duplicate member "a" at offset 12/],
    ['a duplicate inside an array', '[{"a":1,"b":2,"a":1}]', /duplicate member "a" at offset 14/],
    ['a __proto__ duplicate', '{"__proto__":1,"__PROTO__":2}', /duplicate member "__PROTO__"/],
    ['trailing data', '{"a":true} x', /^unexpected data after the JSON value at offset 11$/],
    ['two values', '1 2', /unexpected data after the JSON value at offset 2/],
    ['an extra bracket', '[]]', /unexpected data after the JSON value at offset 2/],
    ['two objects', '{}{}', /unexpected data after/],
    ['a NUL after the value', '{}\u0000', /unexpected data after/],
    ['a line comment', '// c\n1', /invalid JSON at offset 0/],
    ['a block comment', '/* c */1', /invalid JSON at offset 0/],
    ['a comment in an array', '[1/*c*/]', /invalid JSON at offset 2/],
    ['a hash comment', '{"a":1 # x}', /invalid JSON at offset 7/],
    ['a trailing comma in an array', '[1,]', /^invalid JSON at offset 3$/],
    ['a trailing comma in an object', '{"a":1,}', /expected a member name at offset 7/],
    ['a leading comma', '[,1]', /invalid JSON at offset 1/],
    ['an elision', '[1,,2]', /invalid JSON at offset 3/],
    ['an empty member', '{,}', /expected a member name at offset 1/],
    ['a leading zero', '01', /leading zero in number at offset 0/],
    ['a negative leading zero', '-01', /leading zero/],
    ['a double zero', '[00]', /leading zero in number at offset 1/],
    ['a plus sign', '+1', /invalid JSON at offset 0/],
    ['a bare fraction', '.5', /invalid JSON/],
    ['a dangling point', '1.', /invalid number at offset 0/],
    ['a point before the exponent', '1.e3', /invalid number/],
    ['an empty exponent', '1e', /invalid number/],
    ['a signed empty exponent', '1e+', /invalid number/],
    ['a lone minus', '-', /invalid number/],
    ['a double minus', '--1', /invalid number/],
    ['hex', '0x10', /unexpected data after the JSON value at offset 1/],
    ['NaN', 'NaN', /invalid JSON/],
    ['Infinity', 'Infinity', /invalid JSON/],
    ['-Infinity', '-Infinity', /invalid number/],
    ['an overflowing number', '1e400', /number out of range at offset 0/],
    ['a huge integer', `[1${'0'.repeat(400)}]`, /number out of range at offset 1/],
    ['a capitalised literal', 'True', /invalid JSON/],
    ['a truncated literal', 'nul', /invalid JSON/],
    ['undefined', 'undefined', /invalid JSON/],
    ['an unterminated string', '"abc', /unterminated string at offset 0/],
    ['a raw control character', '"a\u0001b"', /control character in string at offset 2/],
    ['a raw newline in a string', '"a\nb"', /control character in string/],
    ['a raw tab in a string', '"\t"', /control character in string/],
    ['a raw NUL in a member name', '{"a\u0000":1}', /control character in string/],
    ['an unknown escape', '"\\x41"', /invalid escape at offset 1/],
    ['an upper-case U escape', '"\\U0041"', /invalid escape/],
    ['a short \\u escape', '"\\u12"', /invalid \\u escape/],
    ['a non-hex \\u escape', '"\\u12G4"', /invalid \\u escape/],
    ['an escaped newline', '"\\\n"', /invalid escape/],
    ['single quotes', "'a'", /invalid JSON/],
    ['a lone high surrogate escape', '"\\ud800"', /lone surrogate escape at offset 1/],
    ['a high surrogate then a letter', '"\\ud800\\u0041"', /lone surrogate escape/],
    ['a lone low surrogate escape', '"\\udc00"', /lone surrogate escape/],
    ['a reversed pair', '"\\udc00\\ud800"', /lone surrogate escape/],
    ['a raw lone surrogate', '"\ud800"', /lone surrogate at offset 1/],
    ['a raw lone low surrogate', '"a\udc00"', /lone surrogate at offset 2/],
    ['an unquoted name', '{a:1}', /expected a member name at offset 1/],
    ['a missing colon', '{"a" 1}', /expected ":" at offset 5/],
    ['a missing value', '{"a":}', /invalid JSON at offset 5/],
    ['a missing comma', '[1 2]', /invalid JSON at offset 3/],
    ['a missing member comma', '{"a":1 "b":2}', /invalid JSON at offset 7/],
    ['an unclosed array', '[1', /unexpected end of JSON text at offset 2/],
    ['an unclosed object', '{"a":1', /unexpected end of JSON text at offset 6/],
    ['a lone bracket', '[', /unexpected end of JSON text at offset 1/],
    ['a lone brace', '{', /unexpected end of JSON text at offset 1/],
    ['no-break space as whitespace', '\u00a01', /invalid JSON at offset 0/],
    ['line separator as whitespace', '[1,\u20282]', /invalid JSON at offset 3/],
    ['form feed as whitespace', '\f1', /invalid JSON/],
    ['vertical tab as whitespace', '1\v', /unexpected data after/],
  ];
  for (const [name, input, detail] of cases) {
    test(name, () => refused(input, detail));
  }

  test('input that is neither text nor bytes', () => {
    refused(42 as unknown as string, /not text/);
    refused(null as unknown as string, /not text/);
  });
});

describe('parseStrictJson reads UTF-8 bytes', () => {
  test('accepts well-formed multi-byte text', () => {
    assert.equal(parseStrictJson(bytes(0x22, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0x22)), 'é😀');
  });
  const invalid: [string, Uint8Array][] = [
    ['a stray 0xFF', bytes(0xff)],
    ['a bad continuation byte', bytes(0x22, 0xc3, 0x28, 0x22)],
    ['an overlong "/"', bytes(0x22, 0xc0, 0xaf, 0x22)],
    ['an overlong NUL', bytes(0x22, 0xc0, 0x80, 0x22)],
    ['an overlong three-byte form', bytes(0x22, 0xe0, 0x80, 0xaf, 0x22)],
    ['an encoded surrogate (CESU-8)', bytes(0x22, 0xed, 0xa0, 0x80, 0x22)],
    ['a truncated sequence', bytes(0x22, 0xe2, 0x82, 0x22)],
    ['a code point above U+10FFFF', bytes(0x22, 0xf4, 0x90, 0x80, 0x80, 0x22)],
    ['a truncated sequence at the end', bytes(0x31, 0xe2)],
  ];
  for (const [name, input] of invalid) {
    test(`refuses ${name}`, () => refused(input, /^request body is not valid UTF-8$/));
  }
  test('refuses a UTF-8 BOM', () => refused(bytes(0xef, 0xbb, 0xbf, 0x7b, 0x7d), /byte order mark/));
  test('refuses a UTF-16 BOM as invalid UTF-8', () =>
    refused(bytes(0xff, 0xfe, 0x31, 0x00), /not valid UTF-8/));
});

describe('nesting depth', () => {
  const arrays = (n: number): string => '['.repeat(n) + ']'.repeat(n);
  const objects = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

  test('32 nested arrays are accepted', () => assert.ok(Array.isArray(parseStrictJson(arrays(32)))));
  test('32 nested objects are accepted', () => assert.equal(typeof parseStrictJson(objects(32)), 'object'));
  test('33 nested arrays are refused', () =>
    refused(arrays(33), /^nesting deeper than 32 levels at offset 32$/));
  test('33 nested objects are refused', () => refused(objects(33), /nesting deeper than 32 levels/));
  test('33 levels mixing arrays and objects are refused', () => {
    refused('[{"a":'.repeat(16) + '[1]' + '}]'.repeat(16), /nesting deeper than 32 levels/);
    assert.ok(parseStrictJson('[{"a":'.repeat(16) + '1' + '}]'.repeat(16)));
  });
  test('siblings do not add up', () =>
    assert.ok(parseStrictJson(`[${Array(1000).fill(arrays(31)).join(',')}]`)));
  test('maxDepth is configurable', () => {
    assert.deepStrictEqual(parseStrictJson('[[1]]', { maxDepth: 2 }), [[1]]);
    refused('[[[1]]]', /^nesting deeper than 2 levels at offset 2$/, 2);
  });
  test('100k-deep brackets are refused at the 33rd level without stack overflow', () => {
    for (const input of [
      '['.repeat(100_000),
      arrays(100_000),
      '{"a":'.repeat(100_000),
      '[{"":'.repeat(50_000),
    ]) {
      // The offset in the message shows where reading stopped: at the limit, not at the end.
      refused(input, /^nesting deeper than 32 levels at offset \d{1,3}$/);
    }
  });
});

describe('prototype safety', () => {
  test('__proto__, constructor and prototype are plain members', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const text = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},"prototype":3}';
    const value = parseStrictJson(text) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), null);
    assert.deepStrictEqual(Object.keys(value), ['__proto__', 'constructor', 'prototype']);
    const own = Object.getOwnPropertyDescriptor(value, '__proto__');
    assert.deepStrictEqual(own?.value, bare({ polluted: 1 }));
    assert.equal(own?.enumerable && own.writable, true);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
    assert.deepStrictEqual(Object.getOwnPropertyNames(Object.prototype).sort(), before);
  });
  test('nested objects also have a null prototype', () => {
    const value = parseStrictJson('[{"a":{"b":[{}]}}]') as [{ a: { b: [object] } }];
    assert.equal(Object.getPrototypeOf(value[0]), null);
    assert.equal(Object.getPrototypeOf(value[0].a), null);
    assert.equal(Object.getPrototypeOf(value[0].a.b[0]), null);
    assert.equal(Object.getPrototypeOf(value), Array.prototype);
  });
});

describe('failure details', () => {
  test('a long hostile member name is cut and escaped', () => {
    const name = `\u0007${'x'.repeat(1000)}`;
    assert.throws(
      () => parseStrictJson(JSON.stringify({ [name]: 1 }).replace('}', `,${JSON.stringify(name)}:2}`)),
      (e: unknown) =>
        e instanceof Problem && (e.detail ?? '').length < 120 && [...(e.detail ?? '')].every((c) => c >= ' '),
    );
  });
  test('large valid documents parse whole', () => {
    const members = Array.from({ length: 20_000 }, (_, i) => `"m${i}":"v\\n\\u00e9${'x'.repeat(20)}"`);
    const text = `{${members.join(',')}}`;
    const value = parseStrictJson(text) as Record<string, string>;
    assert.equal(Object.keys(value).length, 20_000);
    assert.equal(value.m19999, `v\n\u00e9${'x'.repeat(20)}`);
  });
});

describe('foldMemberName', () => {
  const cases: [string, string][] = [
    ['ABC', 'abc'],
    ['Redirect_URI', 'redirect_uri'],
    ['already', 'already'],
    ['\u212a', '\u212a'],
    ['\u017f', '\u017f'],
    ['\u0130', '\u0130'],
    ['ÉSS', 'Éss'],
    ['[@Z`]', '[@z`]'],
  ];
  for (const [input, expected] of cases) {
    test(`${JSON.stringify(input)} folds to ${JSON.stringify(expected)}`, () => {
      assert.equal(foldMemberName(input), expected);
    });
  }
});
