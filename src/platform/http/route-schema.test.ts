// A body schema compiled into decode.ts answers exactly what the hand-written decoder of the same
// rules answers: the same members refused, under the same codes and the same status.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Type from 'typebox';
import { array, boolean, enumOf, nullable, object, optional, refine, string, tryDecode } from './decode.ts';
import { Problem } from './problem.ts';
import { bodyReader, bytesString, decoderFor, idParam, paramsReader, withRule } from './route-schema.ts';
import { parseStrictJson } from './strict-json.ts';

const noDigits = (v: string) => (/\d/.test(v) ? 'no digits' : null);

const schema = Type.Object(
  {
    name: withRule(bytesString(8, { minLength: 1 }), noDigits, 'invalid'),
    kind: Type.Enum(['a', 'b']),
    note: Type.Optional(Type.Union([Type.String({ maxLength: 3 }), Type.Null()])),
    tags: Type.Optional(Type.Array(Type.String(), { maxItems: 2, uniqueItems: true })),
    on: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const handWritten = object({
  name: refine(string({ minLength: 1, maxBytes: 8 }), noDigits, 'invalid'),
  kind: enumOf(['a', 'b']),
  note: nullable(optional(string({ maxLength: 3 }))),
  tags: optional(array(string(), { maxItems: 2, unique: true })),
  on: optional(boolean()),
});
const compiled = decoderFor(schema);

const bodies = [
  '{"name":"ok","kind":"a"}',
  '{"NAME":"ok","Kind":"b","on":null}',
  '{"name":"ok","kind":"a","note":null}',
  '{"name":"ok","kind":"a","extra":1}',
  '{"name":"a1","kind":"c"}',
  '{"name":"ééééé","kind":"a"}',
  '{"name":"","kind":"a","note":"long"}',
  '{"name":5,"kind":"a"}',
  '{"kind":"a","tags":["x","x"]}',
  '{"name":"ok","kind":"a","tags":["x","y","z"]}',
  '[]',
];

describe('route schema › body decoding', () => {
  for (const text of bodies) {
    test(`case=${text} is decoded like the hand-written decoder`, () => {
      const value = parseStrictJson(text);
      assert.deepEqual(tryDecode(compiled, value), tryDecode(handWritten, value));
    });
  }

  test('case=a refused shape is 400 invalid_request, a refused value 422 validation_failed', () => {
    const read = bodyReader({ body: schema, response: {} });
    const thrown = (text: string) => {
      try {
        read(parseStrictJson(text));
      } catch (e) {
        return e;
      }
      return null;
    };
    const shape = thrown('{"name":"ok","kind":"a","extra":1}');
    assert.ok(shape instanceof Problem && shape.status === 400 && shape.code === 'invalid_request');
    const value = thrown('{"name":"a1","kind":"a"}');
    assert.ok(value instanceof Problem && value.status === 422 && value.code === 'validation_failed');
    assert.deepEqual(value.extra?.errors, [{ field: 'name', code: 'invalid', detail: 'no digits' }]);
  });

  test('case=an absent body counts as {} only where the route says so', () => {
    const optionalOnly = Type.Object(
      { reason: Type.Optional(Type.String()) },
      { additionalProperties: false },
    );
    assert.deepEqual(bodyReader({ body: optionalOnly, bodyOptional: true, response: {} })(undefined), {});
    assert.throws(() => bodyReader({ body: optionalOnly, response: {} })(undefined), Problem);
  });

  test('case=a keyword the decoders cannot check is refused when the route is declared', () => {
    assert.throws(() => decoderFor(Type.Union([Type.String(), Type.Integer()])), /anyOf/);
    assert.throws(() => decoderFor(Type.String({ format: 'uri' })), /unsupported/);
  });

  test('case=a path parameter that cannot be an id is 404 with the route detail', () => {
    const check = paramsReader({
      params: Type.Object({ user: idParam(/^usr_[a-z]{3}$/, 'no such user') }),
      response: {},
    });
    check({ user: 'usr_abc' });
    assert.throws(
      () => check({ user: 'usr_ABC' }),
      (e: unknown) => e instanceof Problem && e.status === 404 && e.detail === 'no such user',
    );
  });
});
