// Property tests for the member rule of the decoders (spec doc 1, decoding rule 2): a member the
// shape does not name is refused at whatever depth it sits, names that mean something to
// JavaScript objects (`__proto__`, `constructor`, ...) included, also after the body has been
// copied into ordinary objects the careless way. fast-check reports the seed and path of a failure;
// FC_NUM_RUNS raises the run count.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  array,
  boolean,
  type Decoder,
  integer,
  object,
  optional,
  record,
  string,
  tryDecode,
  unknownJson,
} from './decode.ts';
import { parseStrictJson } from './strict-json.ts';

const params = { numRuns: Number(process.env.FC_NUM_RUNS ?? 300) };

/** A generated body shape: objects with members, arrays of one item shape, free-form maps, scalars. */
type Shape =
  | { t: 'obj'; members: [string, Shape][] }
  | { t: 'arr'; item: Shape }
  | { t: 'map' }
  | { t: 'str' }
  | { t: 'int' }
  | { t: 'bool' };

// No underscores: `a_` and `a` would both be the output key `a`, which object() refuses to build.
const memberName = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);

const scalar = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null));

const shapes = fc.letrec<{ shape: Shape; obj: Shape }>((tie) => ({
  shape: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Shape>({ t: 'str' }, { t: 'int' }, { t: 'bool' }, { t: 'map' }),
    tie('obj'),
    tie('shape').map((item): Shape => ({ t: 'arr', item })),
  ),
  obj: fc
    .uniqueArray(fc.tuple(memberName, tie('shape')), { selector: ([n]) => n, maxLength: 5 })
    .map((members): Shape => ({ t: 'obj', members })),
}));

function decoderOf(s: Shape): Decoder<unknown> {
  switch (s.t) {
    case 'obj':
      return object(Object.fromEntries(s.members.map(([n, m]) => [n, optional(decoderOf(m))])));
    case 'arr':
      return array(decoderOf(s.item), { maxItems: 4 });
    case 'map':
      return record(unknownJson());
    case 'str':
      return string({ maxLength: 20 });
    case 'int':
      return integer();
    case 'bool':
      return boolean();
  }
}

/** A valid value of the shape; objects are Maps so that any member name survives to the text. */
function sampleOf(s: Shape): fc.Arbitrary<unknown> {
  switch (s.t) {
    case 'obj':
      return fc
        .tuple(...s.members.map(([n, m]) => sampleOf(m).map((v) => [n, v] as const)))
        .map((entries) => new Map<string, unknown>(entries));
    case 'arr':
      return fc.array(sampleOf(s.item), { maxLength: 3 });
    case 'map':
      return fc.dictionary(memberName, scalar, { maxKeys: 3 });
    case 'str':
      return fc.string({ maxLength: 20 });
    case 'int':
      return fc.integer();
    case 'bool':
      return fc.boolean();
  }
}

/** Where each shaped object sits, in the decoders' field notation (`a.b[0].c`). */
function objectPaths(v: unknown, path = '', out: [string, Map<string, unknown>][] = []) {
  if (v instanceof Map) {
    out.push([path, v]);
    for (const [k, x] of v) objectPaths(x, path === '' ? k : `${path}.${k}`, out);
  } else if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) objectPaths(x, `${path}[${i}]`, out);
  }
  return out;
}

/** Compact JSON text; `extra` (raw member text) is written into the object `into` at `position`. */
function asText(v: unknown, into?: Map<string, unknown>, position = 0, extra = ''): string {
  if (Array.isArray(v)) return `[${v.map((x) => asText(x, into, position, extra)).join(',')}]`;
  if (!(v instanceof Map)) return JSON.stringify(v);
  const members = [...v].map(([k, x]) => `${JSON.stringify(k)}:${asText(x, into, position, extra)}`);
  if (v === into) members.splice(position, 0, extra);
  return `{${members.join(',')}}`;
}

/** The careless copy: every object rebuilt as an ordinary one, member by member. */
function naiveCopy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(naiveCopy);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = naiveCopy(x);
  return out;
}

/** Objects without two names that fold alike (the strict reader refuses those). */
const smallObject = fc.dictionary(memberName, scalar, { maxKeys: 3 });

const JS_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];

/** A shaped body with one member that is not in the shape, written somewhere inside it. */
const intruded = fc
  .tuple(shapes.obj, fc.constantFrom(...JS_NAMES), fc.nat(), fc.nat())
  .chain(([shape, name, pick, position]) =>
    sampleOf(shape).map((value) => {
      const targets = objectPaths(value);
      const [path, target] = targets[pick % targets.length] as [string, Map<string, unknown>];
      return { shape, value, path, target, name, position: position % (target.size + 1) };
    }),
  )
  .chain((c) =>
    // Objects and arrays, which a careless copy moves into the prototype, and plain values.
    fc.oneof(smallObject, fc.array(fc.integer(), { maxLength: 2 }), scalar).map((extra) => ({ ...c, extra })),
  );

function refusedAt(decoder: Decoder<unknown>, body: unknown, field: string): boolean {
  const r = tryDecode(decoder, body);
  return !r.ok && r.errors.some((e) => e.field === field && e.code === 'unknown_member');
}

describe('decoder member rule properties (spec doc 1, decoding rule 2)', () => {
  test('a valid body of any nested shape decodes', () => {
    fc.assert(
      fc.property(
        shapes.obj.chain((s) => sampleOf(s).map((v) => ({ s, v }))),
        ({ s, v }) => {
          const r = tryDecode(decoderOf(s), parseStrictJson(asText(v)));
          assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
        },
      ),
      params,
    );
  });

  test('__proto__, constructor and the like are unknown members at every depth', () => {
    fc.assert(
      fc.property(intruded, ({ shape, value, path, target, name, position, extra }) => {
        const field = path === '' ? name : `${path}.${name}`;
        // Written into the text directly: a Map or an object literal would not keep `__proto__`.
        const member = `${JSON.stringify(name)}:${JSON.stringify(extra)}`;
        const body = parseStrictJson(asText(value, target, position, member));
        const decoder = decoderOf(shape);
        assert.ok(refusedAt(decoder, body, field), `${field} was not refused`);
        // A copy into ordinary objects hides an object-valued `__proto__` in the prototype; it is
        // still refused. (A scalar `__proto__` is dropped by the assignment itself: nothing is left
        // to see, which is why code never copies bodies that way.)
        const hidden = name === '__proto__' && (typeof extra !== 'object' || extra === null);
        if (!hidden)
          assert.ok(refusedAt(decoder, naiveCopy(body), field), `${field} was not refused after a copy`);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
      }),
      params,
    );
  });

  test('in a free-form map the same names stay plain data', () => {
    fc.assert(
      fc.property(fc.constantFrom(...JS_NAMES), fc.oneof(smallObject, scalar), (name, extra) => {
        const body = parseStrictJson(`{"meta":{${JSON.stringify(name)}:${JSON.stringify(extra)}}}`);
        const r = tryDecode(object({ meta: record(unknownJson()) }), body);
        assert.ok(r.ok);
        const meta = r.value.meta as Record<string, unknown>;
        // A null entry is an absent entry (decoding rule 5).
        if (extra !== null)
          assert.equal(
            JSON.stringify(Object.getOwnPropertyDescriptor(meta, name)?.value),
            JSON.stringify(extra),
          );
        assert.equal(Object.getPrototypeOf(meta), null);
      }),
      params,
    );
  });
});
