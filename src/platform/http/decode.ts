// Declarative decoders from strict-JSON values to camelCase domain values (docs/architecture.md,
// "strict JSON decoding").
// Spec section "Decoding rules for the document (and every strict JSON body of the service)",
// rules 2 and 5: a member the shape does not name is an error at any depth; lookup ignores ASCII
// case using the very folding strict-json.ts uses for duplicates (decision D10); a JSON null
// counts as a missing member except where the shape wraps the member in nullable(). All field
// errors are gathered in one pass so a client sees everything wrong with its body at once.
//
// This is also the one place that says what a refused body answers (docs/decisions.md, Error
// split): a body of the wrong shape (not an object, a wrong JSON type, an unknown or repeated
// member) is 400 invalid_request; a body of the right shape whose values break a rule (range,
// length, list size, enumeration, format, a missing member) is 422 validation_failed. The few
// value rules the spec fixes at 400 wrap their decoder in refusedAsBadRequest().

import { Buffer } from 'node:buffer';
import { type FieldError, type Problem, problem } from './problem.ts';
import { foldMemberName } from './strict-json.ts';

const FAIL: unique symbol = Symbol('decode.fail');
const OMIT: unique symbol = Symbol('decode.omit');
/** Given to a member decoder when the member is absent (or null without nullable()). */
const MISSING: unique symbol = Symbol('decode.missing');
type Outcome<T> = T | typeof FAIL | typeof OMIT;
type Run<T> = (value: unknown, path: string, errors: FieldError[]) => Outcome<T>;

/** Bounds the problem body when a hostile document has thousands of bad members. */
export const MAX_FIELD_ERRORS = 100;

/**
 * A decoder is callable: `decoder(body)` returns the typed value or throws the body's problem
 * (decodeBody), so a module can export `const decodeX = object({...})` and call `decodeX(req.body)`.
 */
export interface Decoder<T> {
  (value: unknown): T;
  /** Protocol between the combinators; callers use the decoder itself. */
  readonly run: Run<T>;
  /** JSON null reaches this decoder instead of counting as absent. */
  readonly keepsNull: boolean;
  /** An absent member is left out of the output object. */
  readonly omittable: boolean;
  /** What the decoder accepts, as data: for documentation and for tests that walk the routes. */
  readonly spec: DecoderSpec;
  /** Its value errors are answered 400 as the spec says (refusedAsBadRequest). */
  readonly badRequest: boolean;
}
export interface OptionalDecoder<T> extends Decoder<T> {
  readonly omittable: true;
}
export type Decoded<D> = D extends Decoder<infer T> ? T : never;
export type DecodeResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** The accepted values of a decoder; wrappers (optional, map, refine...) show the inner one's. */
export type DecoderSpec =
  | { kind: 'object'; members: ReadonlyMap<string, Decoder<unknown>> }
  | { kind: 'array'; item: Decoder<unknown>; minItems?: number; maxItems?: number }
  | { kind: 'record'; value: Decoder<unknown>; maxEntries?: number; maxBytes?: number }
  | ({ kind: 'string' } & StringOptions)
  | { kind: 'number'; integral: boolean; min?: number; max?: number }
  | { kind: 'boolean' }
  | { kind: 'literal'; value: string | number | boolean }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'json'; maxBytes?: number };

/** Decodes or returns every field error, for callers that report errors their own way. */
export function tryDecode<T>(decoder: Decoder<T>, value: unknown): DecodeResult<T> {
  const errors: FieldError[] = [];
  const out = decoder.run(value, '', errors);
  if (out === FAIL || out === OMIT || errors.length > 0) {
    return { ok: false, errors: errors.length > 0 ? errors : [{ field: '', code: 'type' }] };
  }
  return { ok: true, value: out };
}

/** Codes that mean the body is not of the expected shape. */
const SHAPE_CODES = new Set(['type', 'unknown_member']);
/**
 * Other errors answered 400: a member given twice under two spellings (strict-json refuses that
 * before decoding; values built elsewhere meet it here), and the errors of members whose value
 * rules the spec answers with 400 (refusedAsBadRequest). A repeated list item is a value error.
 */
const BAD_REQUEST_ERRORS = new WeakSet<FieldError>();

/** The problem for a refused body: 400 when its shape is wrong, else 422 naming each member. */
export function bodyProblem(errors: FieldError[]): Problem {
  return errors.some((e) => SHAPE_CODES.has(e.code) || BAD_REQUEST_ERRORS.has(e))
    ? problem.invalidRequest('request body has invalid members', errors)
    : problem.validation(errors);
}

type BodyObserver = (decoder: Decoder<unknown>) => void;
let bodyObserver: BodyObserver | null = null;

/**
 * Sees every decoder a request body is decoded with. Only the route walk of
 * test/integration/edge/value-errors.test.ts sets one: it learns from it which decoder a route
 * uses, and from the decoder's spec which values to send.
 */
export function observeBodyDecoding(observer: BodyObserver | null): void {
  bodyObserver = observer;
}

/** Decodes a request body; a refusal throws bodyProblem(errors). */
export function decodeBody<T>(decoder: Decoder<T>, value: unknown): T {
  bodyObserver?.(decoder as Decoder<unknown>);
  const result = tryDecode(decoder, value);
  if (!result.ok) throw bodyProblem(result.errors);
  return result.value;
}

/**
 * For routes that take no input: no body, or an empty object (any member is unknown), so that a
 * body sent by mistake is refused rather than ignored (spec doc 1, decoding rule 2).
 */
export function decodeNoBody(body: unknown): void {
  decodeBody(NO_MEMBERS, body ?? {});
}

interface Flags {
  keepsNull?: boolean;
  omittable?: boolean;
  badRequest?: boolean;
}

function build<T>(run: Run<T>, spec: DecoderSpec, flags: Flags = {}): Decoder<T> {
  const decoder = Object.assign((v: unknown): T => decodeBody(decoder, v), {
    run,
    spec,
    keepsNull: flags.keepsNull ?? false,
    omittable: flags.omittable ?? false,
    badRequest: flags.badRequest ?? false,
  });
  return decoder;
}

/** The flags of a decoder that another wraps. */
const flagsOf = (d: Decoder<unknown>): Flags => ({
  keepsNull: d.keepsNull,
  omittable: d.omittable,
  badRequest: d.badRequest,
});

function report(errors: FieldError[], field: string, code: string, detail?: string): typeof FAIL {
  if (errors.length < MAX_FIELD_ERRORS) errors.push(detail ? { field, code, detail } : { field, code });
  return FAIL;
}

/** report(), for an error that makes the body a bad request whatever its code. */
function reportBadRequest(errors: FieldError[], field: string, code: string): typeof FAIL {
  const before = errors.length;
  report(errors, field, code);
  for (const e of errors.slice(before)) BAD_REQUEST_ERRORS.add(e);
  return FAIL;
}

interface Bounds {
  min?: number | undefined;
  max?: number | undefined;
}

/** Reports n outside the bounds under the low or high code; true when it was outside. */
function outside(errs: FieldError[], at: string, n: number, b: Bounds, codes: string, unit = ''): boolean {
  const [low = '', high = ''] = codes.split(' ');
  if (b.min !== undefined && n < b.min) report(errs, at, low, `at least ${b.min}${unit}`);
  else if (b.max !== undefined && n > b.max) report(errs, at, high, `at most ${b.max}${unit}`);
  else return false;
  return true;
}

/** A decoder for a present value; absence is reported as `required`. */
function present<T>(spec: DecoderSpec, check: Run<T>): Decoder<T> {
  return build(
    (v, path, errors) => (v === MISSING ? report(errors, path, 'required') : check(v, path, errors)),
    spec,
  );
}

const join = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);
// Member names are echoed back to the client; keep them short.
const shown = (name: string): string => (name.length > 128 ? `${name.slice(0, 128)}...` : name);
const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The members of a JSON object, including one hidden in its prototype. The strict reader builds
 * objects without a prototype, so a `__proto__` member is an own member like any other; but code
 * that copies a body into an ordinary object (`copy[name] = value`) turns that member into the
 * copy's prototype, where Object.keys no longer sees it and it would pass unnoticed. Such a
 * prototype is given back as the member `__proto__`, so every check that walks members with this
 * refuses it as unknown (spec doc 1, decoding rule 2) however the object was built.
 */
export function jsonMembers(v: Record<string, unknown>): [string, unknown][] {
  const members = Object.entries(v);
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== null && proto !== Object.prototype) members.push(['__proto__', proto]);
  return members;
}

// ---- objects ---------------------------------------------------------------------------------

export type CamelCase<S extends string> = S extends `${infer H}_${infer T}`
  ? `${H}${Capitalize<CamelCase<T>>}`
  : S;

/** Runtime twin of CamelCase<S>, including doubled or trailing underscores. */
export function camelCase(wire: string): string {
  const [head = '', ...rest] = wire.split('_');
  return head + rest.map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join('');
}

type Shape = Record<string, Decoder<unknown>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type IsOpt<D> = D extends OptionalDecoder<unknown> ? true : false;
export type ObjectOutput<S extends Shape> = Simplify<
  { [K in keyof S & string as IsOpt<S[K]> extends true ? never : CamelCase<K>]: Decoded<S[K]> } & {
    [K in keyof S & string as IsOpt<S[K]> extends true ? CamelCase<K> : never]?: Decoded<S[K]>;
  }
>;

export interface ObjectOptions {
  /** Wire names accepted and dropped, e.g. informational members the spec says to ignore. */
  ignore?: readonly string[];
}

/** Shape keys are wire (snake_case) names; the output uses their camelCase form. */
export function object<S extends Shape>(shape: S, opts: ObjectOptions = {}): Decoder<ObjectOutput<S>> {
  const members = new Map<string, { wire: string; key: string; decoder: Decoder<unknown> }>();
  const keys = new Set<string>();
  for (const [wire, decoder] of Object.entries(shape)) {
    const key = camelCase(wire);
    // A programming error in a shape; it surfaces when the module loads, not per request.
    if (members.has(foldMemberName(wire)) || keys.has(key)) throw new Error(`decoder shape repeats ${wire}`);
    members.set(foldMemberName(wire), { wire, key, decoder });
    keys.add(key);
  }
  const ignored = new Set((opts.ignore ?? []).map(foldMemberName));
  const spec: DecoderSpec = {
    kind: 'object',
    members: new Map([...members.values()].map((m) => [m.wire, m.decoder])),
  };

  return present(spec, (v, path, errors) => {
    if (!isJsonObject(v)) return report(errors, path, 'type', 'expected an object');
    let ok = true;
    const given = new Map<string, unknown>();
    for (const [name, value] of jsonMembers(v)) {
      const folded = foldMemberName(name);
      const member = members.get(folded);
      // strict-json already refuses duplicates; values built elsewhere still must not alias a member.
      const code = given.has(folded) ? 'duplicate' : member || ignored.has(folded) ? '' : 'unknown_member';
      if (code) {
        reportBadRequest(errors, join(path, member ? member.wire : shown(name)), code);
        ok = false;
      } else given.set(folded, value);
    }
    const out: Record<string, unknown> = {};
    for (const [folded, { wire, key, decoder }] of members) {
      let raw = given.has(folded) ? given.get(folded) : MISSING;
      if (raw === undefined || (raw === null && !decoder.keepsNull)) raw = MISSING;
      const r = decoder.run(raw, join(path, wire), errors);
      if (r === FAIL) ok = false;
      else if (r !== OMIT) out[key] = r;
    }
    return ok ? (out as ObjectOutput<S>) : FAIL;
  });
}

const NO_MEMBERS = object({});

// ---- presence and transforms -----------------------------------------------------------------

/** Absent (or null) members are left out, or replaced by a fresh copy of the default. */
export function optional<T>(d: Decoder<T>): OptionalDecoder<T>;
export function optional<T>(d: Decoder<T>, defaultValue: NoInfer<T>): Decoder<T>;
export function optional<T>(d: Decoder<T>, ...fallback: [] | [T]): Decoder<T> {
  const has = fallback.length > 0;
  const value = fallback[0] as T;
  // Copied so that one request cannot mutate the default the next one receives.
  const copy = (): T => (typeof value === 'object' && value !== null ? structuredClone(value) : value);
  const run: Run<T> = (v, path, errors) => (v !== MISSING ? d.run(v, path, errors) : has ? copy() : OMIT);
  return build(run, d.spec, { ...flagsOf(d), omittable: !has });
}

/** JSON null is kept as null instead of meaning "absent" (spec decoding rule 5). */
export function nullable<T>(d: OptionalDecoder<T>): OptionalDecoder<T | null>;
export function nullable<T>(d: Decoder<T>): Decoder<T | null>;
export function nullable<T>(d: Decoder<T>): Decoder<T | null> {
  const run: Run<T | null> = (v, path, errors) => (v === null ? null : d.run(v, path, errors));
  return build(run, d.spec, { ...flagsOf(d), keepsNull: true });
}

export function map<A, B>(d: OptionalDecoder<A>, fn: (value: A) => B): OptionalDecoder<B>;
export function map<A, B>(d: Decoder<A>, fn: (value: A) => B): Decoder<B>;
export function map<A, B>(d: Decoder<A>, fn: (value: A) => B): Decoder<B> {
  const run: Run<B> = (v, path, errors) => {
    const r = d.run(v, path, errors);
    return r === FAIL || r === OMIT ? (r as typeof FAIL | typeof OMIT) : fn(r);
  };
  return build(run, d.spec, flagsOf(d));
}

type Check<T> = (value: T) => string | null;

/** `check` returns null when the value is fine, else a short detail reported under `code`. */
export function refine<T>(d: OptionalDecoder<T>, check: Check<T>, code: string): OptionalDecoder<T>;
export function refine<T>(d: Decoder<T>, check: Check<T>, code: string): Decoder<T>;
export function refine<T>(d: Decoder<T>, check: Check<T>, code: string): Decoder<T> {
  const run: Run<T> = (v, path, errors) => {
    const r = d.run(v, path, errors);
    if (r === FAIL || r === OMIT) return r;
    const detail = check(r);
    return detail === null ? r : report(errors, path, code, detail);
  };
  return build(run, d.spec, flagsOf(d));
}

/**
 * A member whose every refusal the spec answers with 400 invalid_request rather than 422, such as
 * an invalid cursor (spec doc 1, Errors). Its errors are listed as usual.
 */
export function refusedAsBadRequest<T>(d: OptionalDecoder<T>): OptionalDecoder<T>;
export function refusedAsBadRequest<T>(d: Decoder<T>): Decoder<T>;
export function refusedAsBadRequest<T>(d: Decoder<T>): Decoder<T> {
  const run: Run<T> = (v, path, errors) => {
    const before = errors.length;
    const r = d.run(v, path, errors);
    for (let i = before; i < errors.length; i++) BAD_REQUEST_ERRORS.add(errors[i] as FieldError);
    return r;
  };
  return build(run, d.spec, { ...flagsOf(d), badRequest: true });
}

// ---- scalars ---------------------------------------------------------------------------------

export interface StringOptions {
  /** Lengths count Unicode code points. */
  minLength?: number;
  maxLength?: number;
  /** Sizes count UTF-8 bytes, which is how the spec states most limits. */
  minBytes?: number;
  maxBytes?: number;
  /** Must match the whole string; anchors are added. */
  pattern?: RegExp;
  /** Only U+0020..U+007E. */
  printableAscii?: boolean;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

export function string(opts: StringOptions = {}): Decoder<string> {
  // Re-anchored and stripped of g/y so test() keeps no lastIndex state between requests.
  const flags = opts.pattern?.flags.replace(/[gy]/g, '');
  const pattern = opts.pattern && new RegExp(`^(?:${opts.pattern.source})$`, flags);
  const chars: Bounds = { min: opts.minLength, max: opts.maxLength };
  const bytes: Bounds = { min: opts.minBytes, max: opts.maxBytes };
  return present({ kind: 'string', ...opts }, (v, path, errors) => {
    if (typeof v !== 'string') return report(errors, path, 'type', 'expected a string');
    if (opts.printableAscii && !PRINTABLE_ASCII.test(v))
      return report(errors, path, 'pattern', 'printable ASCII');
    const n = chars.min === undefined && chars.max === undefined ? 0 : [...v].length;
    if (outside(errors, path, n, chars, 'too_short too_long', ' characters')) return FAIL;
    if (outside(errors, path, Buffer.byteLength(v), bytes, 'too_short too_long', ' bytes')) return FAIL;
    return pattern && !pattern.test(v) ? report(errors, path, 'pattern', 'invalid format') : v;
  });
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 date-time with its offset, as a Date. */
export const dateTime = (): Decoder<Date> =>
  map(
    refine(
      string({ maxLength: 64 }),
      (v) => (RFC3339.test(v) && !Number.isNaN(Date.parse(v)) ? null : 'an RFC 3339 date-time'),
      'pattern',
    ),
    (v) => new Date(v),
  );

export interface RangeOptions {
  min?: number;
  max?: number;
}

function numeric(integral: boolean, range: RangeOptions): Decoder<number> {
  const expected = integral ? 'expected an integer' : 'expected a number';
  return present({ kind: 'number', integral, ...range }, (v, path, errors) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return report(errors, path, 'type', expected);
    if (integral && !Number.isInteger(v)) return report(errors, path, 'type', expected);
    // Past 2^53 the parsed number may differ from what was sent, so such integers are refused.
    if (integral && !Number.isSafeInteger(v))
      return report(errors, path, v > 0 ? 'too_large' : 'too_small', 'beyond 2^53');
    return outside(errors, path, v, range, 'too_small too_large') ? FAIL : v;
  });
}

/** Safe integers only. */
export const integer = (range: RangeOptions = {}): Decoder<number> => numeric(true, range);
/** Finite numbers. */
export const number = (range: RangeOptions = {}): Decoder<number> => numeric(false, range);

export function boolean(): Decoder<boolean> {
  return present({ kind: 'boolean' }, (v, path, errors) =>
    typeof v === 'boolean' ? v : report(errors, path, 'type', 'expected a boolean'),
  );
}

export function literal<const V extends string | number | boolean>(value: V): Decoder<V> {
  return present({ kind: 'literal', value }, (v, path, errors) => {
    if (v === value) return value;
    if (typeof v !== typeof value) return report(errors, path, 'type', `expected a ${typeof value}`);
    return report(errors, path, 'not_allowed', `must be ${JSON.stringify(value)}`);
  });
}

export function enumOf<const V extends readonly string[]>(values: V): Decoder<V[number]> {
  const allowed = new Set<string>(values);
  const detail = `one of: ${values.join(', ')}`;
  return present({ kind: 'enum', values }, (v, path, errors) => {
    if (typeof v !== 'string') return report(errors, path, 'type', 'expected a string');
    return allowed.has(v) ? (v as V[number]) : report(errors, path, 'not_allowed', detail);
  });
}

// ---- collections -----------------------------------------------------------------------------

export interface ArrayOptions {
  minItems?: number;
  maxItems?: number;
  /** Items must be distinct after decoding, compared structurally. */
  unique?: boolean;
}

export function array<T>(item: Decoder<T>, opts: ArrayOptions = {}): Decoder<T[]> {
  const count: Bounds = { min: opts.minItems, max: opts.maxItems };
  const spec: DecoderSpec = { kind: 'array', item: item as Decoder<unknown>, ...count };
  return present(spec, (v, path, errors) => {
    if (!Array.isArray(v)) return report(errors, path, 'type', 'expected an array');
    // An oversized list is not decoded item by item: that only multiplies the errors and the work.
    if (outside(errors, path, v.length, count, 'too_few too_many', ' items')) return FAIL;
    const out: T[] = [];
    const seen = new Set<string>();
    let ok = true;
    for (let i = 0; i < v.length; i++) {
      const r = item.run(v[i], `${path}[${i}]`, errors);
      const key = opts.unique && r !== FAIL && r !== OMIT ? canonical(r) : '';
      if (r === FAIL || r === OMIT) ok = false;
      else if (seen.has(key)) {
        // A repeated item breaks the list's rule (422); a repeated member (below) is a shape error.
        report(errors, `${path}[${i}]`, 'duplicate', 'repeats an earlier item');
        ok = false;
      } else {
        if (opts.unique) seen.add(key);
        out.push(r);
      }
    }
    return ok ? out : FAIL;
  });
}

/** Key-order-independent text of a JSON-like value. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    isJsonObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  ) ?? String(v);

export interface RecordOptions {
  maxEntries?: number;
  /** Size of the whole map as compact JSON, in UTF-8 bytes. */
  maxBytes?: number;
  /** Optional check of each key; otherwise keys are taken as given. */
  key?: Decoder<string>;
}

/** A free-form map. The result has a null prototype, so keys such as "__proto__" stay data. */
export function record<T>(value: Decoder<T>, opts: RecordOptions = {}): Decoder<Record<string, T>> {
  const spec: DecoderSpec = {
    kind: 'record',
    value: value as Decoder<unknown>,
    maxEntries: opts.maxEntries,
    maxBytes: opts.maxBytes,
  };
  return present(spec, (v, path, errors) => {
    if (!isJsonObject(v)) return report(errors, path, 'type', 'expected an object');
    const entries = jsonMembers(v);
    if (outside(errors, path, entries.length, { max: opts.maxEntries }, 'too_few too_many', ' entries'))
      return FAIL;
    const size = opts.maxBytes === undefined ? 0 : jsonBytes(v);
    if (outside(errors, path, size, { max: opts.maxBytes }, 'too_short too_long', ' bytes')) return FAIL;
    const out: Record<string, T> = Object.create(null);
    let ok = true;
    for (const [name, entry] of entries) {
      const field = join(path, shown(name));
      if (opts.key && opts.key.run(name, field, errors) === FAIL) ok = false;
      // Spec decoding rule 5 covers map entries as well: a null entry is an absent entry.
      if (entry === null && !value.keepsNull) continue;
      const r = value.run(entry, field, errors);
      if (r === FAIL) ok = false;
      else if (r !== OMIT) out[name] = r;
    }
    return ok ? out : FAIL;
  });
}

export interface UnknownJsonOptions {
  /** Size as compact JSON, in UTF-8 bytes. */
  maxBytes?: number;
}

/** Any JSON value, kept as parsed (objects keep their null prototype), e.g. free-form metadata. */
export function unknownJson(opts: UnknownJsonOptions = {}): Decoder<unknown> {
  return present({ kind: 'json', maxBytes: opts.maxBytes }, (v, path, errors) => {
    const size = jsonBytes(v);
    if (size < 0) return report(errors, path, 'type', 'expected a JSON value');
    return outside(errors, path, size, { max: opts.maxBytes }, 'too_short too_long', ' bytes') ? FAIL : v;
  });
}

/** UTF-8 size of the compact JSON form, or -1 when the value is not JSON data. */
function jsonBytes(v: unknown): number {
  try {
    const text: string | undefined = JSON.stringify(v);
    return text === undefined ? -1 : Buffer.byteLength(text);
  } catch {
    return -1;
  }
}
