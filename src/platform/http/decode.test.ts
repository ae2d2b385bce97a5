import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  array,
  boolean,
  camelCase,
  type Decoded,
  decodeBody,
  enumOf,
  integer,
  literal,
  MAX_FIELD_ERRORS,
  map,
  nullable,
  number,
  object,
  optional,
  record,
  refine,
  refusedAsBadRequest,
  string,
  tryDecode,
  unknownJson,
} from './decode.ts';
import { type FieldError, Problem } from './problem.ts';
import { parseStrictJson } from './strict-json.ts';

const errorsOf = (decoder: Parameters<typeof tryDecode>[0], value: unknown): FieldError[] => {
  const result = tryDecode(decoder, value);
  assert.equal(result.ok, false, 'expected the value to be refused');
  return result.ok ? [] : result.errors;
};
const codes = (decoder: Parameters<typeof tryDecode>[0], value: unknown): string[] =>
  errorsOf(decoder, value).map((e) => `${e.field}:${e.code}`);
const body = (text: string): unknown => parseStrictJson(text);

const client = object({
  client_id: string({ minLength: 1, maxLength: 128 }),
  redirect_uris: array(string({ maxBytes: 2048 }), { minItems: 1, maxItems: 4, unique: true }),
  requires_organization: optional(nullable(boolean())),
  max_age: optional(integer({ min: 0 }), 300),
  metadata: optional(unknownJson({ maxBytes: 64 })),
});
const request = object({
  client,
  grants: optional(record(object({ scopes: array(string()) }))),
  note: optional(string()),
});

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const typeCheck: Equal<
  Decoded<typeof client>,
  {
    clientId: string;
    redirectUris: string[];
    maxAge: number;
    requiresOrganization?: boolean | null;
    metadata?: unknown;
  }
> = true;

describe('object', () => {
  test('outputs camelCase keys, typed at compile time', () => {
    assert.equal(typeCheck, true);
    const out = client(body('{"client_id":"c","redirect_uris":["https://a.example/cb"]}'));
    assert.deepStrictEqual(out, { clientId: 'c', redirectUris: ['https://a.example/cb'], maxAge: 300 });
    assert.equal(camelCase('a__b_'), 'aB');
    assert.equal(camelCase('expected_policy_revision'), 'expectedPolicyRevision');
  });

  test('matches member names case-insensitively with ASCII folding only', () => {
    const out = client(body('{"CLIENT_ID":"c","Redirect_Uris":["x"],"mAx_AgE":5}'));
    assert.deepStrictEqual(out, { clientId: 'c', redirectUris: ['x'], maxAge: 5 });
    const d = object({ kid: optional(string()) });
    assert.deepStrictEqual(codes(d, body('{"\\u212Aid":"x"}')), ['\u212Aid:unknown_member']);
  });

  test('never outputs anything but the shape, and refuses case-folded duplicates', () => {
    const d = object({ a: optional(integer()) });
    const out = d(body('{"A":1}'));
    assert.deepStrictEqual(Object.keys(out), ['a']);
    // A value that did not come through strict-json can still carry both spellings.
    assert.deepStrictEqual(codes(d, { a: 1, A: 2 }), ['a:duplicate']);
  });

  test('reports unknown members at every nesting level with wire paths', () => {
    const text = JSON.stringify({
      client: { client_id: 'c', redirect_uris: ['x'], secret: 1, metadata: { free: 'form' } },
      grants: { 'app-1': { scopes: [], extra: true } },
      mfa_passed: true,
    });
    assert.deepStrictEqual(codes(request, body(text)), [
      'mfa_passed:unknown_member',
      'client.secret:unknown_member',
      'grants.app-1.extra:unknown_member',
    ]);
    const nested = object({ items: array(object({ a: integer() })) });
    assert.deepStrictEqual(codes(nested, body('{"items":[{"a":1},{"a":2,"b":3}]}')), [
      'items[1].b:unknown_member',
    ]);
  });

  test('finds an unknown member inserted at each object of the schema tree', () => {
    const valid = {
      client: { client_id: 'c', redirect_uris: ['x'] },
      grants: { g: { scopes: ['s'] } },
    };
    const objects: [string, Record<string, unknown>][] = [];
    const collect = (path: string, v: unknown): void => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return;
      if (path !== 'grants') objects.push([path, v as Record<string, unknown>]); // a record takes any key
      for (const [k, x] of Object.entries(v)) collect(path ? `${path}.${k}` : k, x);
    };
    collect('', valid);
    assert.equal(objects.length, 3);
    for (const [path, target] of objects) {
      target['Unexpected_Member'] = 1;
      const field = path ? `${path}.Unexpected_Member` : 'Unexpected_Member';
      assert.deepStrictEqual(errorsOf(request, body(JSON.stringify(valid))), [
        { field, code: 'unknown_member' },
      ]);
      delete target['Unexpected_Member'];
    }
    assert.ok(tryDecode(request, body(JSON.stringify(valid))).ok);
  });

  test('null means absent unless the member is nullable', () => {
    const d = object({ name: string(), note: optional(string()), policy: nullable(unknownJson()) });
    assert.deepStrictEqual(codes(d, body('{"name":null,"note":null,"policy":null}')), ['name:required']);
    assert.deepStrictEqual(d(body('{"name":"n","note":null,"policy":null}')), { name: 'n', policy: null });
    assert.deepStrictEqual(codes(d, body('{"name":"n"}')), ['policy:required']);
    const out = client(
      body('{"client_id":"c","redirect_uris":["x"],"requires_organization":null,"max_age":null}'),
    );
    assert.deepStrictEqual(out, {
      clientId: 'c',
      redirectUris: ['x'],
      requiresOrganization: null,
      maxAge: 300,
    });
    assert.deepStrictEqual(codes(array(string()), [null]), ['[0]:type']);
  });

  test('ignored members are accepted and dropped', () => {
    const d = object({ format: optional(string()) }, { ignore: ['realm', 'excluded'] });
    assert.deepStrictEqual(d(body('{"format":"","Realm":{"name":"x"},"excluded":[]}')), { format: '' });
  });

  test('defaults are fresh copies', () => {
    const d = object({ tags: optional(array(string()), ['a']) });
    const first = d({});
    first.tags.push('mutated');
    assert.deepStrictEqual(d({}).tags, ['a']);
  });

  test('a shape that repeats a member after folding is a programming error', () => {
    assert.throws(() => object({ a_b: string(), A_B: string() }), /repeats/);
    assert.throws(() => object({ ab: string(), a_b: string(), aB: string() }), /repeats/);
  });

  test('__proto__ in a body is just an unknown member', () => {
    assert.deepStrictEqual(codes(client, body('{"__proto__":{"client_id":"x"}}')), [
      '__proto__:unknown_member',
      'client_id:required',
      'redirect_uris:required',
    ]);
    assert.equal(({} as Record<string, unknown>)['client_id'], undefined);
  });
});

describe('error codes', () => {
  const cases: [string, Parameters<typeof tryDecode>[0], unknown, string][] = [
    ['type: object', object({}), [], ':type'],
    ['type: string', string(), 1, ':type'],
    ['type: integer from a fraction', integer(), 1.5, ':type'],
    ['type: integer from a string', integer(), '1', ':type'],
    ['type: number NaN', number(), Number.NaN, ':type'],
    ['type: boolean', boolean(), 'true', ':type'],
    ['type: array', array(string()), {}, ':type'],
    ['type: record', record(string()), [], ':type'],
    ['type: literal', literal(1), '1', ':type'],
    ['type: enum', enumOf(['a']), 1, ':type'],
    ['too_short characters', string({ minLength: 2 }), 'é', ':too_short'],
    ['too_long characters', string({ maxLength: 2 }), 'abc', ':too_long'],
    ['too_short bytes', string({ minBytes: 3 }), 'é', ':too_short'],
    ['too_long bytes', string({ maxBytes: 3 }), 'éé', ':too_long'],
    ['too_small', integer({ min: 1 }), 0, ':too_small'],
    ['too_large', number({ max: 1.5 }), 1.6, ':too_large'],
    ['too_large beyond safe integers', integer(), 2 ** 53, ':too_large'],
    ['too_small beyond safe integers', integer(), -(2 ** 53), ':too_small'],
    ['too_few', array(string(), { minItems: 1 }), [], ':too_few'],
    ['too_many items', array(string(), { maxItems: 1 }), ['a', 'b'], ':too_many'],
    ['too_many entries', record(string(), { maxEntries: 1 }), { a: 'a', b: 'b' }, ':too_many'],
    ['too_long record', record(string(), { maxBytes: 8 }), { a: 'abcdef' }, ':too_long'],
    ['too_long json', unknownJson({ maxBytes: 3 }), [1, 2], ':too_long'],
    ['pattern', string({ pattern: /[a-z]+/ }), 'abc1', ':pattern'],
    ['pattern printable ASCII', string({ printableAscii: true }), 'a\nb', ':pattern'],
    ['pattern non-ASCII', string({ printableAscii: true }), 'é', ':pattern'],
    ['not_allowed enum', enumOf(['web', 'native']), 'Web', ':not_allowed'],
    ['not_allowed literal', literal('service.realm-config.v1'), 'v2', ':not_allowed'],
    ['duplicate item', array(string(), { unique: true }), ['a', 'b', 'a'], '[2]:duplicate'],
    [
      'duplicate object item',
      array(unknownJson(), { unique: true }),
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      '[1]:duplicate',
    ],
    [
      'custom refine code',
      refine(string(), (s) => (s.includes('*') ? 'no wildcards' : null), 'wildcard'),
      'a*',
      ':wildcard',
    ],
    ['required', object({ a: string() }), {}, 'a:required'],
    ['unknown_member', object({}), { a: 1 }, 'a:unknown_member'],
  ];
  for (const [name, decoder, value, expected] of cases) {
    test(name, () => assert.deepStrictEqual(codes(decoder, value), [expected]));
  }

  test('details are short and name the limit', () => {
    assert.deepStrictEqual(errorsOf(string({ maxBytes: 3 }), 'éé'), [
      { field: '', code: 'too_long', detail: 'at most 3 bytes' },
    ]);
    assert.deepStrictEqual(errorsOf(enumOf(['a', 'b']), 'c'), [
      { field: '', code: 'not_allowed', detail: 'one of: a, b' },
    ]);
  });
});

describe('values', () => {
  test('character lengths count code points, byte sizes count UTF-8', () => {
    assert.equal(string({ maxLength: 3 })('😀😀😀'), '😀😀😀');
    assert.equal(string({ maxLength: 3, maxBytes: 6 })('ééé'), 'ééé');
    assert.deepStrictEqual(codes(string({ maxBytes: 11 }), '😀😀😀'), [':too_long']);
    assert.equal(string({ minBytes: 2 })('é'), 'é');
  });

  test('patterns match the whole string and keep no state between calls', () => {
    const d = string({ pattern: /[a-z]+/g });
    for (let i = 0; i < 3; i++) assert.equal(d('abc'), 'abc');
    assert.deepStrictEqual(codes(d, '1abc'), [':pattern']);
    assert.equal(string({ printableAscii: true })(' ~'), ' ~');
  });

  test('integers, numbers, booleans, literals and enums pass through', () => {
    assert.equal(integer({ min: -1, max: 1 })(-1), -1);
    assert.equal(integer()(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
    assert.equal(number()(0.5), 0.5);
    assert.equal(boolean()(false), false);
    assert.equal(literal(true)(true), true);
    assert.equal(enumOf(['web', 'native'])('native'), 'native');
  });

  test('map transforms present values only', () => {
    const d = object({ scope: optional(map(string(), (s) => s.split(' '))) });
    assert.deepStrictEqual(d({ scope: 'a b' }), { scope: ['a', 'b'] });
    assert.deepStrictEqual(d({}), {});
  });

  test('refine skips absent members', () => {
    const d = object({ uri: optional(refine(string(), () => 'never valid', 'invalid_uri')) });
    assert.deepStrictEqual(d({}), {});
    assert.deepStrictEqual(errorsOf(d, { uri: 'x' }), [
      { field: 'uri', code: 'invalid_uri', detail: 'never valid' },
    ]);
  });

  test('records keep keys as given in a null-prototype object and drop null entries', () => {
    const d = record(integer(), { key: string({ maxLength: 9 }) });
    const out = d(body('{"App":1,"__proto__":2,"x":null}'));
    assert.equal(Object.getPrototypeOf(out), null);
    assert.deepStrictEqual(Object.entries(out), [
      ['App', 1],
      ['__proto__', 2],
    ]);
    assert.deepStrictEqual(codes(d, { much_too_long: 1 }), ['much_too_long:too_long']);
  });

  test('unknownJson keeps the parsed value', () => {
    const value = body('{"a":[1,{"b":null}]}');
    assert.equal(unknownJson()(value), value);
    assert.deepStrictEqual(codes(unknownJson(), undefined), [':type']);
  });
});

describe('collecting errors', () => {
  test('every error is reported, not just the first', () => {
    const text = JSON.stringify({
      client: { client_id: '', redirect_uris: ['x', 'x', 1], max_age: -1, unknown: 1 },
      grants: { g: { scopes: 'all' } },
      note: 5,
    });
    assert.deepStrictEqual(codes(request, body(text)), [
      'client.unknown:unknown_member',
      'client.client_id:too_short',
      'client.redirect_uris[1]:duplicate',
      'client.redirect_uris[2]:type',
      'client.max_age:too_small',
      'grants.g.scopes:type',
      'note:type',
    ]);
  });

  test('the list is capped for hostile documents', () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`m${i}`, i]));
    assert.equal(errorsOf(object({}), many).length, MAX_FIELD_ERRORS);
  });

  test('a refused body is 422 validation_failed when only values break rules', () => {
    for (const run of [() => decodeBody(client, {}), () => client({})]) {
      assert.throws(run, (e: unknown) => {
        assert.ok(e instanceof Problem);
        assert.equal(e.status, 422);
        assert.equal(e.code, 'validation_failed');
        assert.deepStrictEqual(e.extra?.errors, [
          { field: 'client_id', code: 'required' },
          { field: 'redirect_uris', code: 'required' },
        ]);
        return true;
      });
    }
  });

  const statusOf = (run: () => unknown): number => {
    try {
      run();
    } catch (e) {
      if (e instanceof Problem) return e.status;
      throw e;
    }
    return 200;
  };

  test('a wrong shape anywhere is 400 invalid_request, even beside value errors', () => {
    const cases: [string, unknown, number][] = [
      ['not an object', [], 400],
      ['a wrong JSON type', { client_id: 5, redirect_uris: ['a'] }, 400],
      ['an unknown member', { client_id: 'a', redirect_uris: ['a'], extra: 1 }, 400],
      ['an unknown member beside a value error', { client_id: '', redirect_uris: ['a'], extra: 1 }, 400],
      [
        'a member given twice under two spellings',
        { client_id: 'a', CLIENT_ID: 'b', redirect_uris: ['a'] },
        400,
      ],
      ['a string too short', { client_id: '', redirect_uris: ['a'] }, 422],
      ['an integer out of range', { client_id: 'a', redirect_uris: ['a'], max_age: -1 }, 422],
      ['too many items', { client_id: 'a', redirect_uris: ['a', 'b', 'c', 'd', 'e'] }, 422],
      ['a repeated list item', { client_id: 'a', redirect_uris: ['a', 'a'] }, 422],
      ['a missing member', { redirect_uris: ['a'] }, 422],
    ];
    for (const [name, value, status] of cases)
      assert.equal(
        statusOf(() => decodeBody(client, value)),
        status,
        name,
      );
  });

  test('refusedAsBadRequest keeps the errors but answers 400', () => {
    const d = object({
      cursor: refusedAsBadRequest(optional(string({ maxLength: 4 }))),
      n: optional(integer({ max: 1 })),
    });
    assert.equal(
      statusOf(() => d({ cursor: 'toolong' })),
      400,
    );
    assert.equal(
      statusOf(() => d({ n: 2 })),
      422,
    );
    assert.equal(
      statusOf(() => d({ cursor: 'ok' })),
      200,
    );
    assert.deepStrictEqual(codes(d, { cursor: 'toolong', n: 2 }), ['cursor:too_long', 'n:too_large']);
  });

  test('tryDecode returns the value or the errors', () => {
    assert.deepStrictEqual(tryDecode(integer(), 1), { ok: true, value: 1 });
    assert.deepStrictEqual(tryDecode(integer({ max: 0 }), 1), {
      ok: false,
      errors: [{ field: '', code: 'too_large', detail: 'at most 0' }],
    });
  });
});
