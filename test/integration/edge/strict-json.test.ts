// Strict JSON bodies as a client meets them through the real public listener: media types, size
// limits, the hostile-input corpus and member decoding (spec doc 1 decoding rules; decision D10).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import {
  array,
  boolean,
  decodeBody,
  integer,
  object,
  optional,
  record,
  string,
  unknownJson,
} from '../../../src/platform/http/decode.ts';
import { startHarness } from '../../harness/harness.ts';
import { assertJson, assertProblem, postJson, rawExchange, requestHead, send } from './http-client.ts';

const echoShape = object({
  name: optional(string()),
  kind: optional(string()),
  count: optional(integer()),
  nested: optional(object({ inner: optional(object({ flag: optional(boolean()) })) })),
  items: optional(array(object({ id: string() }))),
  any: optional(unknownJson()),
  meta: optional(record(unknownJson())),
});
const requiredShape = object({ id: string() });

async function start(t: TestContext, overrides: Record<string, unknown> = {}): Promise<string> {
  const h = await startHarness(t, {
    overrides,
    beforeListen: (app) => {
      app.post('/test/echo', async (req) => decodeBody(echoShape, req.body));
      app.post('/test/required', async (req) => decodeBody(requiredShape, req.body));
    },
  });
  return h.publicUrl;
}

const nest = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('edge › strict JSON › media type', () => {
  const refused: [string, string | null, string][] = [
    ['text/plain', 'text/plain', '{}'],
    ['text/plain with utf-8 charset', 'text/plain; charset=utf-8', '{}'],
    ['form-urlencoded', 'application/x-www-form-urlencoded', 'name=a'],
    ['multipart', 'multipart/form-data; boundary=x', '--x\r\n\r\n--x--'],
    ['missing content type', null, '{}'],
    ['json with latin1 charset', 'application/json; charset=latin1', '{}'],
    ['json with iso-8859-1 charset', 'application/json; charset=iso-8859-1', '{}'],
    ['json with utf-16 charset', 'application/json; charset=utf-16', '{}'],
    ['a longer subtype', 'application/jsonx', '{}'],
    ['json-patch', 'application/json-patch+json', '[]'],
  ];
  for (const [label, contentType, body] of refused) {
    test(`case=refuses ${label} with 415`, async (t) => {
      const url = await start(t);
      const res = await postJson(url, '/test/echo', body, contentType);
      assertProblem(res, 415, 'invalid_request');
    });
  }

  const accepted = [
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'Application/JSON',
  ];
  test('case=accepts application/json with or without a utf-8 charset', async (t) => {
    const url = await start(t);
    for (const contentType of accepted) {
      const res = await postJson(url, '/test/echo', '{"name":"a"}', contentType);
      assert.deepEqual(assertJson(res, 200), { name: 'a' }, contentType);
    }
  });
});

describe('edge › strict JSON › body size', () => {
  const limit = 1024;
  // A valid body of exactly n bytes.
  const bodyOf = (n: number): string => {
    const frame = '{"name":""}';
    return `{"name":"${'a'.repeat(n - frame.length)}"}`;
  };

  test('case=a body of exactly limits.max_body_bytes is read', async (t) => {
    const url = await start(t, { 'limits.max_body_bytes': limit });
    const body = bodyOf(limit);
    assert.equal(Buffer.byteLength(body), limit);
    const res = await postJson(url, '/test/echo', body);
    assert.deepEqual(assertJson(res, 200), JSON.parse(body));
  });

  test('case=a declared Content-Length over the limit gets 413', async (t) => {
    const url = await start(t, { 'limits.max_body_bytes': limit });
    const res = await postJson(url, '/test/echo', bodyOf(limit + 1));
    const p = assertProblem(res, 413, 'invalid_request');
    assert.match(p.detail ?? '', new RegExp(`\\b${limit}\\b`), 'detail names the limit');
  });

  test('case=a chunked body growing over the limit gets 413', async (t) => {
    const url = await start(t, { 'limits.max_body_bytes': limit });
    const body = bodyOf(limit * 2);
    const chunks = [body.slice(0, 900), body.slice(900, 1800), body.slice(1800)];
    const head = requestHead('POST', '/test/echo', new URL(url).host, [
      ['Content-Type', 'application/json'],
      ['Transfer-Encoding', 'chunked'],
    ]);
    const framed =
      chunks.map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`).join('') + '0\r\n\r\n';
    const res = await rawExchange(url, [head, framed]);
    assertProblem(res, 413, 'invalid_request');
  });

  test('case=a chunked body under the limit is read', async (t) => {
    const url = await start(t, { 'limits.max_body_bytes': limit });
    const head = requestHead('POST', '/test/echo', new URL(url).host, [
      ['Content-Type', 'application/json'],
      ['Transfer-Encoding', 'chunked'],
    ]);
    const res = await rawExchange(url, [head, '5\r\n{"nam\r\n', '7\r\ne":"x"}\r\n', '0\r\n\r\n']);
    assert.deepEqual(assertJson(res, 200), { name: 'x' });
  });
});

describe('edge › strict JSON › hostile corpus', () => {
  // [label, body bytes, detail pattern]: every entry is refused with 400 invalid_request.
  const corpus: [string, string | Buffer, RegExp][] = [
    ['duplicate member', '{"name":"a","name":"b"}', /duplicate member "name"/],
    ['duplicate member in another case', '{"name":"a","NAME":"b"}', /duplicate member "NAME"/],
    ['duplicate member nested', '{"nested":{"inner":{"flag":true,"Flag":false}}}', /duplicate member "Flag"/],
    ['duplicate member inside an array item', '{"items":[{"id":"a","ID":"b"}]}', /duplicate member "ID"/],
    ['nesting depth 33', `{"any":${nest(32)}}`, /nesting deeper than 32/],
    ['100k open brackets', `{"any":${'['.repeat(100_000)}`, /nesting deeper than 32/],
    ['trailing value', '{}{}', /unexpected data after/],
    ['trailing garbage', '{"name":"a"} x', /unexpected data after/],
    ['trailing comma after the document', '{"name":"a"},', /unexpected data after/],
    ['invalid UTF-8 byte', Buffer.from([...Buffer.from('{"name":"'), 0xff, ...Buffer.from('"}')]), /UTF-8/],
    [
      'overlong UTF-8 slash',
      Buffer.from([...Buffer.from('{"name":"'), 0xc0, 0xaf, ...Buffer.from('"}')]),
      /UTF-8/,
    ],
    [
      'UTF-8 encoded surrogate',
      Buffer.from([...Buffer.from('{"name":"'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]),
      /UTF-8/,
    ],
    ['truncated UTF-8 sequence', Buffer.from([...Buffer.from('{"name":"'), 0xe2, 0x82]), /UTF-8/],
    ['byte order mark', Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('{}')]), /byte order mark/],
    ['whitespace only', ' \n\t ', /empty JSON text/],
    ['lone surrogate escape', '{"name":"\\ud800"}', /lone surrogate/],
    ['reversed surrogate pair', '{"name":"\\udc00\\ud800"}', /lone surrogate/],
    ['single quotes', "{'name':'a'}", /member name/],
    ['unquoted member name', '{name:"a"}', /member name/],
    ['trailing comma in object', '{"name":"a",}', /member name/],
    ['trailing comma in array', '{"any":[1,]}', /invalid JSON/],
    ['comment', '{"name":"a" /* c */}', /invalid JSON/],
    ['NaN', '{"count":NaN}', /invalid JSON/],
    ['Infinity', '{"count":Infinity}', /invalid JSON/],
    ['number overflowing to infinity', '{"count":1e400}', /out of range/],
    ['leading zero', '{"count":01}', /leading zero/],
    ['plus sign', '{"count":+1}', /invalid JSON/],
    ['raw control character in a string', '{"name":"a\u0001b"}', /control character/],
    ['raw newline in a string', '{"name":"a\nb"}', /control character/],
    ['invalid escape', '{"name":"\\x41"}', /invalid escape/],
    ['unterminated string', '{"name":"abc', /unterminated string/],
    ['truncated document', '{"name":', /unexpected end/],
    ['missing colon', '{"name" "a"}', /expected ":"/],
    ['bare word', 'undefined', /invalid JSON/],
  ];

  test('case=every corpus entry is refused with 400 and a detail naming the fault', async (t) => {
    const url = await start(t);
    for (const [label, body, detail] of corpus) {
      const res = await postJson(url, '/test/echo', body);
      const p = assertProblem(res, 400, 'invalid_request');
      assert.match(p.detail ?? '', detail, label);
    }
  });

  test('case=nesting depth 32 is accepted', async (t) => {
    const url = await start(t);
    // The outer object is level 1, so 31 arrays inside it reach depth 32.
    const res = await postJson(url, '/test/echo', `{"any":${nest(31)}}`);
    assert.deepEqual(assertJson(res, 200), JSON.parse(`{"any":${nest(31)}}`));
  });

  test('case=non-object documents are refused as the wrong type', async (t) => {
    const url = await start(t);
    for (const body of ['[]', '"x"', '1', 'true', 'null']) {
      const p = assertProblem(await postJson(url, '/test/echo', body), 400, 'invalid_request');
      assert.deepEqual(
        p.errors?.map((e) => [e.field, e.code]),
        [['', 'type']],
        body,
      );
    }
  });

  test('case=the server keeps answering after the corpus', async (t) => {
    const url = await start(t);
    for (const [, body] of corpus) await postJson(url, '/test/echo', body);
    assert.deepEqual(assertJson(await postJson(url, '/test/echo', '{"name":"still here"}'), 200), {
      name: 'still here',
    });
  });
});

describe('edge › strict JSON › members', () => {
  const unknown: [string, string, string[]][] = [
    ['top level', '{"bogus":1}', ['bogus']],
    ['second level', '{"nested":{"bogus":1}}', ['nested.bogus']],
    ['third level', '{"nested":{"inner":{"flag":true,"extra":1}}}', ['nested.inner.extra']],
    ['inside an array item', '{"items":[{"id":"a"},{"id":"b","x":1}]}', ['items[1].x']],
    ['several at once', '{"a":1,"nested":{"b":2,"inner":{"c":3}}}', ['a', 'nested.b', 'nested.inner.c']],
    ['a Kelvin sign is not the letter k', '{"\\u212Aind":"x"}', ['\u212Aind']],
  ];
  for (const [label, body, fields] of unknown) {
    test(`case=an unknown member ${label} gets 400 unknown_member`, async (t) => {
      const url = await start(t);
      const p = assertProblem(await postJson(url, '/test/echo', body), 400, 'invalid_request');
      assert.deepEqual(
        p.errors?.map((e) => ({ field: e.field, code: e.code })),
        fields.map((field) => ({ field, code: 'unknown_member' })),
      );
    });
  }

  test('case=member names match without regard to ASCII case', async (t) => {
    const url = await start(t);
    const res = await postJson(
      url,
      '/test/echo',
      '{"NAME":"x","Nested":{"INNER":{"Flag":true}},"Items":[{"Id":"1"}]}',
    );
    assert.deepEqual(assertJson(res, 200), {
      name: 'x',
      nested: { inner: { flag: true } },
      items: [{ id: '1' }],
    });
  });

  test('case=null members are treated as absent', async (t) => {
    const url = await start(t);
    const res = await postJson(
      url,
      '/test/echo',
      '{"name":null,"count":null,"nested":{"inner":null},"items":null}',
    );
    assert.deepEqual(assertJson(res, 200), { nested: {} });
  });

  test('case=a null required member is reported as missing', async (t) => {
    const url = await start(t);
    const p = assertProblem(await postJson(url, '/test/required', '{"id":null}'), 422, 'validation_failed');
    assert.deepEqual(
      p.errors?.map((e) => [e.field, e.code]),
      [['id', 'required']],
    );
  });

  test('case=a wrongly typed member is reported with its path', async (t) => {
    const url = await start(t);
    const p = assertProblem(
      await postJson(url, '/test/echo', '{"count":"1","nested":{"inner":{"flag":"yes"}}}'),
      400,
      'invalid_request',
    );
    assert.deepEqual(
      p.errors?.map((e) => [e.field, e.code]),
      [
        ['count', 'type'],
        ['nested.inner.flag', 'type'],
      ],
    );
  });

  test('case=a __proto__ member is an unknown member and pollutes nothing', async (t) => {
    const url = await start(t);
    const p = assertProblem(
      await postJson(url, '/test/echo', '{"__proto__":{"polluted":true},"name":"a"}'),
      400,
      'invalid_request',
    );
    assert.deepEqual(
      p.errors?.map((e) => [e.field, e.code]),
      [['__proto__', 'unknown_member']],
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('case=__proto__ and constructor keys in a free-form map stay plain data', async (t) => {
    const url = await start(t);
    const body = '{"meta":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}';
    const out = assertJson(await postJson(url, '/test/echo', body), 200) as { meta: Record<string, unknown> };
    assert.ok(Object.hasOwn(out.meta, '__proto__'), 'the __proto__ entry is echoed as an own member');
    assert.deepEqual(Object.getOwnPropertyDescriptor(out.meta, '__proto__')?.value, { polluted: true });
    assert.deepEqual(out.meta['constructor'], { prototype: { polluted: true } });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  });

  test('case=a body-less POST with a JSON content type is refused, not read as {}', async (t) => {
    const url = await start(t);
    const res = await send(url, '/test/echo', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': 0 },
    });
    assertProblem(res, 400, 'invalid_request');
  });
});
