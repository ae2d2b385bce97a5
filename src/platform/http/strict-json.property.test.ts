// Property tests for the strict JSON reader (decision D10). fast-check reports the seed
// and path of any failure; replay with fc.assert(prop, { seed, path }) and keep it as a unit case.
// FC_NUM_RUNS raises the run count for long local or nightly runs.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Problem } from './problem.ts';
import { foldMemberName, parseStrictJson } from './strict-json.ts';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 1000);
const params = { numRuns };

type Json = fc.JsonValue;
type Step = string | number;

const isObject = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Structure without prototypes: arrays and objects tagged so they cannot be confused. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return { array: v.map(shape) };
  if (isObject(v)) return { object: Object.keys(v).map((k) => [k, shape(v[k])]) };
  return v;
}

function depth(v: unknown): number {
  const children = Array.isArray(v) ? v : isObject(v) ? Object.values(v) : null;
  return children === null ? 0 : 1 + Math.max(0, ...children.map(depth));
}

function foldsUniquely(v: unknown): boolean {
  if (Array.isArray(v)) return v.every(foldsUniquely);
  if (!isObject(v)) return true;
  const keys = Object.keys(v);
  return new Set(keys.map(foldMemberName)).size === keys.length && Object.values(v).every(foldsUniquely);
}

/** Paths to every object that has at least one member. */
function objectPaths(v: unknown, at: Step[] = [], out: Step[][] = []): Step[][] {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) objectPaths(v[i], [...at, i], out);
  } else if (isObject(v)) {
    if (Object.keys(v).length > 0) out.push(at);
    for (const k of Object.keys(v)) objectPaths(v[k], [...at, k], out);
  }
  return out;
}

function at(v: unknown, path: Step[]): Record<string, Json> {
  let cur = v;
  for (const step of path) cur = (cur as Record<Step, unknown>)[step];
  return cur as Record<string, Json>;
}

const sameStep = (a: Step[], b: Step[]): boolean => a.length === b.length && a.every((s, i) => s === b[i]);

/** JSON.stringify, except that `extra` is spliced into the object at `target` as raw member text. */
function serialise(v: unknown, target: Step[], position: number, extra: string, here: Step[] = []): string {
  if (Array.isArray(v))
    return `[${v.map((x, i) => serialise(x, target, position, extra, [...here, i])).join(',')}]`;
  if (!isObject(v)) return JSON.stringify(v);
  const members = Object.keys(v).map(
    (k) => `${JSON.stringify(k)}:${serialise(v[k], target, position, extra, [...here, k])}`,
  );
  if (sameStep(here, target)) members.splice(position, 0, extra);
  return `{${members.join(',')}}`;
}

/** A member name written with some code units as \u escapes. */
const escapedName = (name: string, mask: boolean[]): string =>
  `"${[...name.split('')]
    .map((c, i) =>
      mask[i % Math.max(1, mask.length)]
        ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
        : JSON.stringify(c).slice(1, -1),
    )
    .join('')}"`;

/** The folding is ASCII-only, so the generated case variants must be too. */
const asciiToggle = (c: string): string =>
  /[a-z]/.test(c) ? c.toUpperCase() : /[A-Z]/.test(c) ? c.toLowerCase() : c;

const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 6 }),
  fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }),
  fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }),
);
const docs = anyJson.filter(foldsUniquely);
const whitespace = fc.constantFrom<string | number | undefined>(undefined, 0, 1, 2, '\t', '\r\n ');

function throwsOnlyProblem(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch (e) {
    if (e instanceof Problem && e.status === 400 && e.code === 'invalid_request') return false;
    throw e;
  }
}

describe('strict JSON properties', () => {
  test('agrees with JSON.parse on documents without folded duplicates', () => {
    fc.assert(
      fc.property(docs, whitespace, (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        const expected = shape(JSON.parse(text));
        assert.deepStrictEqual(shape(parseStrictJson(text)), expected);
        assert.deepStrictEqual(shape(parseStrictJson(Buffer.from(text, 'utf8'))), expected);
      }),
      params,
    );
  });

  test('agrees with JSON.parse when wrapped up to exactly depth 32, and refuses depth 33', () => {
    const wrapped = fc.tuple(docs, fc.array(fc.boolean(), { minLength: 33, maxLength: 33 }));
    fc.assert(
      fc.property(wrapped, ([v, kinds]) => {
        const wrap = (text: string, levels: number): string =>
          kinds
            .slice(0, levels)
            .reduce((inner, isArray) => (isArray ? `[${inner}]` : `{"Wrap":${inner}}`), text);
        const text = JSON.stringify(v);
        const ok = wrap(text, 32 - depth(v));
        assert.deepStrictEqual(shape(parseStrictJson(ok)), shape(JSON.parse(ok)));
        assert.throws(() => parseStrictJson(wrap(text, 33 - depth(v))), /nesting deeper than 32 levels/);
      }),
      params,
    );
  });

  test('a case-varied duplicate inserted anywhere is refused', () => {
    const withObject = docs.filter((v) => objectPaths(v).length > 0);
    const mutation = withObject.chain((v) => {
      const paths = objectPaths(v);
      return fc.nat({ max: paths.length - 1 }).chain((p) => {
        const target = paths[p] as Step[];
        const names = Object.keys(at(v, target));
        return fc.record({
          v: fc.constant(v),
          target: fc.constant(target),
          name: fc
            .constantFrom(...names)
            .chain((n) => fc.mixedCase(fc.constant(n), { toggleCase: asciiToggle })),
          position: fc.nat({ max: names.length }),
          escapes: fc.array(fc.boolean(), { maxLength: 8 }),
          value: fc.jsonValue({ maxDepth: 2 }),
        });
      });
    });
    fc.assert(
      fc.property(mutation, ({ v, target, name, position, escapes, value }) => {
        const extra = `${escapedName(name, escapes)}:${JSON.stringify(value)}`;
        const text = serialise(v, target, position, extra);
        assert.throws(() => parseStrictJson(text), /duplicate member/);
      }),
      params,
    );
  });

  test('__proto__, constructor and prototype never reach Object.prototype', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const key = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'polluted');
    const tricky = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 1 }).filter(foldsUniquely),
        tie('object'),
        fc.array(tie('value')),
      ),
      // A Map stands for an object so that names like __proto__ survive until serialisation.
      object: fc
        .uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, maxLength: 6 })
        .map((entries) => new Map(entries)),
    }));
    const asText = (v: unknown): string =>
      v instanceof Map
        ? `{${[...v].map(([k, x]) => `${JSON.stringify(k)}:${asText(x)}`).join(',')}}`
        : Array.isArray(v)
          ? `[${v.map(asText).join(',')}]`
          : JSON.stringify(v);
    fc.assert(
      fc.property(tricky.value, (v) => {
        const text = asText(v);
        const parsed = parseStrictJson(text);
        assert.deepStrictEqual(shape(parsed), shape(JSON.parse(text)));
        assert.deepStrictEqual(Object.getOwnPropertyNames(Object.prototype).sort(), before);
        assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
        const stack = [parsed];
        while (stack.length > 0) {
          const cur = stack.pop();
          if (isObject(cur)) assert.equal(Object.getPrototypeOf(cur), null);
          if (Array.isArray(cur) || isObject(cur)) stack.push(...Object.values(cur));
        }
      }),
      params,
    );
  });

  test('arbitrary bytes never throw anything but a Problem', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
        throwsOnlyProblem(() => parseStrictJson(b));
      }),
      params,
    );
  });

  test('arbitrary JSON-like text: only Problems, and never looser than JSON.parse', () => {
    const token = fc.constantFrom(
      ...[
        '[',
        ']',
        '{',
        '}',
        '"',
        ':',
        ',',
        '\\',
        'u',
        'd8',
        '00',
        'dc',
        '0',
        '1',
        '-',
        '+',
        'e',
        '.',
        ' ',
        '\n',
      ],
      ...['true', 'nul', 'null', '"a"', '"A"', '\ud800', '\u0000', '\ufeff', '\u212a', '/*', '//'],
    );
    const text = fc.oneof(
      fc.string({ unit: token, maxLength: 80 }),
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.string({ unit: 'binary-ascii', maxLength: 20 }).map((t) => `"${t}"`),
      // Mostly valid documents with a few tokens spliced in reach the deeper grammar paths.
      fc.tuple(docs, fc.array(fc.tuple(fc.nat(), token), { minLength: 1, maxLength: 3 })).map(([v, edits]) =>
        edits.reduce((t, [pos, tok]) => {
          const i = pos % (t.length + 1);
          return t.slice(0, i) + tok + t.slice(i);
        }, JSON.stringify(v)),
      ),
    );
    // Every refusal of something JSON.parse accepts must be one of the deliberate strict rules.
    const strictOnly = /duplicate member|nesting deeper|lone surrogate|number out of range/;
    fc.assert(
      fc.property(text, (t) => {
        let expected: unknown;
        let lenient = true;
        try {
          expected = JSON.parse(t);
        } catch {
          lenient = false;
        }
        try {
          const value = parseStrictJson(t);
          assert.ok(lenient, `accepted what JSON.parse refuses: ${JSON.stringify(t)}`);
          assert.deepStrictEqual(shape(value), shape(expected));
        } catch (e) {
          if (!(e instanceof Problem)) throw e;
          if (lenient) assert.match(e.detail ?? '', strictOnly);
        }
      }),
      params,
    );
  });

  test('byte mutations of valid documents never throw anything but a Problem', () => {
    const mutated = fc
      .tuple(
        docs,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: -1, max: 255 })), { minLength: 1, maxLength: 4 }),
      )
      .map(([v, edits]) => {
        const b = [...Buffer.from(JSON.stringify(v), 'utf8')];
        // -1 deletes a byte; anything else overwrites one (or appends when the document is empty).
        for (const [pos, byte] of edits) {
          const i = pos % Math.max(1, b.length);
          if (byte < 0) b.splice(i, 1);
          else b[i] = byte;
        }
        return Uint8Array.from(b);
      });
    fc.assert(
      fc.property(mutated, (b) => {
        throwsOnlyProblem(() => parseStrictJson(b));
      }),
      params,
    );
  });
});
