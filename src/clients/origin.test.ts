// Origin values (spec doc 1, "Value formats used in configuration", Origin row) and the Origin matcher
// (docs/decisions.md, D17).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type OriginRejection, originMatches, validateOrigin } from './origin.ts';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 500);

const accepted: Array<[string, string]> = [
  ['https://app.example.com', 'https://app.example.com'],
  ['https://app.example.com/', 'https://app.example.com'],
  ['http://localhost:3000', 'http://localhost:3000'],
  ['http://localhost:3000/', 'http://localhost:3000'],
  ['https://app.example.com:8443', 'https://app.example.com:8443'],
  ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
  ['http://[::1]:8080/', 'http://[::1]:8080'],
  ['https://my_host.example', 'https://my_host.example'],
];

const rejected: Array<[string, OriginRejection]> = [
  ['', 'empty'],
  [' https://a.example', 'whitespace'],
  ['https://a.example\t', 'whitespace'],
  ['https://a.example\u00a0', 'whitespace'],
  ['https://a.example\u0000', 'control_character'],
  ['https://a.example\u200b', 'control_character'],
  ['https://b\u00fccher.example', 'non_ascii'],
  ['*', 'wildcard'],
  ['https://*.example.com', 'wildcard'],
  ['https://a.example\\', 'backslash'],
  ['a.example', 'not_absolute'],
  ['//a.example', 'not_absolute'],
  ['ftp://a.example', 'scheme_not_allowed'],
  ['null', 'not_absolute'],
  ['file:///x', 'scheme_not_allowed'],
  ['chrome-extension://abcdef', 'scheme_not_allowed'],
  ['https:a.example', 'missing_host'],
  ['https://', 'missing_host'],
  ['https:///', 'missing_host'],
  ['https://:443', 'missing_host'],
  ['https://user@a.example', 'userinfo'],
  ['https://a.example@evil.example', 'userinfo'],
  ['https://a.example#', 'fragment'],
  ['https://a.example/#x', 'fragment'],
  ['https://a.example?', 'query'],
  ['https://a.example/?x=1', 'query'],
  ['https://a.example//', 'path'],
  ['https://a.example/app', 'path'],
  ['https://a..example', 'invalid_host'],
  ['https://a%2eexample', 'invalid_host'],
  ['https://[::1', 'invalid_host'],
  ['https://a.example:', 'invalid_port'],
  ['https://a.example:0', 'invalid_port'],
  ['https://a.example:65536', 'invalid_port'],
  ['https://a.1', 'invalid_host'],
  ['HTTPS://a.example', 'not_canonical'],
  ['https://App.Example.com', 'not_canonical'],
  ['https://a.example:443', 'not_canonical'],
  ['http://a.example:80', 'not_canonical'],
  ['https://a.example:0443', 'not_canonical'],
  ['http://127.1:8080', 'not_canonical'],
  ['http://[0:0:0:0:0:0:0:1]', 'not_canonical'],
];

describe('validateOrigin', () => {
  for (const [raw, origin] of accepted) {
    test(`accepts ${raw} as ${origin}`, () => assert.deepEqual(validateOrigin(raw), { ok: true, origin }));
  }
  for (const [raw, reason] of rejected) {
    test(`refuses ${JSON.stringify(raw)}: ${reason}`, () =>
      assert.deepEqual(validateOrigin(raw), { ok: false, reason }));
  }

  test('an accepted origin is what the URL parser serializes as its origin', () => {
    fc.assert(
      fc.property(fc.webUrl({ validSchemes: ['https', 'http'] }), (url) => {
        const v = validateOrigin(url);
        if (v.ok) assert.equal(new URL(url).origin, v.origin);
        const own = validateOrigin(new URL(url).origin);
        if (own.ok) assert.equal(own.origin, new URL(url).origin);
      }),
      { numRuns },
    );
  });
});

describe('originMatches', () => {
  const allowed = ['https://app.example.com', 'http://localhost:3000'];
  const cases: Array<[string, readonly string[], boolean]> = [
    ['https://app.example.com', allowed, true],
    ['http://localhost:3000', allowed, true],
    ['https://app.example.com/', allowed, false],
    ['https://App.example.com', allowed, false],
    ['https://app.example.com:443', allowed, false],
    ['http://app.example.com', allowed, false],
    ['https://app.example.com.evil.example', allowed, false],
    ['https://evil.example', allowed, false],
    ['http://localhost:3001', allowed, false],
    ['null', allowed, false],
    ['null', ['null'], false],
    ['', [''], false],
    ['https://app.example.com', [], false],
  ];
  for (const [origin, list, expected] of cases) {
    test(`${JSON.stringify(origin)} in [${list.join(', ')}] -> ${expected}`, () => {
      assert.equal(originMatches(origin, list), expected);
    });
  }
});
