// Strict JSON reader for request bodies. Spec section "Decoding rules for the document (and every
// strict JSON body of the service)", rules 3 and 4 plus the name folding of rule 2; decision D10
// (docs/decisions.md). The body size limit of rule 4 is enforced by the body reader before this
// runs.
//
// JSON.parse is not usable here: it silently keeps the last of two duplicate members and turns a
// "__proto__" member into a prototype-shaped own property on an ordinary object. This scanner is
// iterative (an explicit container stack), so nesting is counted while reading and hostile inputs
// such as 100k open brackets are refused at the 33rd bracket instead of exhausting the call stack.

import { problem } from './problem.ts';

export interface StrictJsonOptions {
  /** Deepest container nesting allowed; the outermost object or array counts as 1. */
  maxDepth?: number;
}

export const DEFAULT_MAX_DEPTH = 32;

/**
 * Member-name folding used for duplicate detection here and for member lookup in decode.ts.
 * Only A-Z are folded: Unicode case mapping would make U+212A (Kelvin sign) equal to "k" and let
 * two different wire names collide (decision D10).
 */
export function foldMemberName(name: string): string {
  return ASCII_UPPER.test(name) ? name.replace(ASCII_UPPER_ALL, lowerAscii) : name;
}

const ASCII_UPPER = /[A-Z]/;
const ASCII_UPPER_ALL = /[A-Z]/g;
const lowerAscii = (c: string): string => String.fromCharCode(c.charCodeAt(0) | 0x20);

// fatal: malformed, overlong and surrogate-encoding byte sequences are refused instead of being
// replaced by U+FFFD. ignoreBOM: keep a BOM in the text so that it can be refused explicitly.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses one strict JSON text (RFC 8259 grammar, no extensions). Objects come back with a null
 * prototype. Every failure is a 400 invalid_request Problem whose detail names the reason and the
 * offset (in UTF-16 code units of the decoded text).
 */
export function parseStrictJson(input: string | Uint8Array, opts: StrictJsonOptions = {}): unknown {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else if (input instanceof Uint8Array) {
    try {
      text = utf8.decode(input);
    } catch {
      throw problem.invalidRequest('request body is not valid UTF-8');
    }
  } else {
    throw problem.invalidRequest('request body is not text');
  }
  if (text.charCodeAt(0) === 0xfeff) fail('byte order mark is not allowed', 0);
  return new Scanner(text, opts.maxDepth ?? DEFAULT_MAX_DEPTH).document();
}

function fail(reason: string, offset: number): never {
  throw problem.invalidRequest(`${reason} at offset ${offset}`);
}

// Member names are attacker-controlled; quote and cut them so the detail stays short and printable.
function quoteName(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
}

/** One open container. Fields are always present so the shape stays monomorphic. */
interface Frame {
  array: unknown[] | null;
  object: Record<string, unknown> | null;
  key: string;
  seen: Set<string> | null;
}

class Scanner {
  private i = 0;
  private readonly stack: Frame[] = [];
  private readonly s: string;
  private readonly maxDepth: number;

  constructor(s: string, maxDepth: number) {
    this.s = s;
    this.maxDepth = maxDepth;
  }

  document(): unknown {
    const { s, stack } = this;
    this.skipWs();
    if (this.i >= s.length) fail('empty JSON text', this.i);
    for (;;) {
      let value: unknown;
      this.skipWs();
      const c = s.charCodeAt(this.i);
      if (c === 0x5b || c === 0x7b) {
        if (stack.length >= this.maxDepth) fail(`nesting deeper than ${this.maxDepth} levels`, this.i);
        this.i++;
        this.skipWs();
        if (c === 0x5b) {
          if (s.charCodeAt(this.i) !== 0x5d) {
            stack.push({ array: [], object: null, key: '', seen: null });
            continue;
          }
          this.i++;
          value = [];
        } else {
          const object: Record<string, unknown> = Object.create(null);
          if (s.charCodeAt(this.i) !== 0x7d) {
            const frame: Frame = { array: null, object, key: '', seen: new Set() };
            this.memberName(frame);
            stack.push(frame);
            continue;
          }
          this.i++;
          value = object;
        }
      } else if (c === 0x22) {
        value = this.string();
      } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        value = this.number();
      } else if (s.startsWith('true', this.i)) {
        this.i += 4;
        value = true;
      } else if (s.startsWith('false', this.i)) {
        this.i += 5;
        value = false;
      } else if (s.startsWith('null', this.i)) {
        this.i += 4;
        value = null;
      } else {
        fail(this.i >= s.length ? 'unexpected end of JSON text' : 'invalid JSON', this.i);
      }

      // A value is complete: store it in its container, closing as many containers as end here.
      for (;;) {
        const top = stack[stack.length - 1];
        this.skipWs();
        if (top === undefined) {
          if (this.i < s.length) fail('unexpected data after the JSON value', this.i);
          return value;
        }
        const d = s.charCodeAt(this.i);
        if (top.array !== null) {
          top.array.push(value);
          if (d === 0x2c) {
            this.i++;
            break;
          }
          if (d !== 0x5d) fail(this.i >= s.length ? 'unexpected end of JSON text' : 'invalid JSON', this.i);
          value = top.array;
        } else {
          // The container has a null prototype, so "__proto__" lands as a plain own member.
          (top.object as Record<string, unknown>)[top.key] = value;
          if (d === 0x2c) {
            this.i++;
            this.skipWs();
            this.memberName(top);
            break;
          }
          if (d !== 0x7d) fail(this.i >= s.length ? 'unexpected end of JSON text' : 'invalid JSON', this.i);
          value = top.object;
        }
        this.i++;
        stack.pop();
      }
    }
  }

  /** Reads `"name" :` for the given object frame, refusing names already seen after folding. */
  private memberName(frame: Frame): void {
    const at = this.i;
    if (this.s.charCodeAt(at) !== 0x22) {
      fail(at >= this.s.length ? 'unexpected end of JSON text' : 'expected a member name', at);
    }
    const name = this.string();
    const folded = foldMemberName(name);
    const seen = frame.seen as Set<string>;
    if (seen.has(folded)) fail(`duplicate member ${quoteName(name)}`, at);
    seen.add(folded);
    frame.key = name;
    this.skipWs();
    if (this.s.charCodeAt(this.i) !== 0x3a) fail('expected ":"', this.i);
    this.i++;
  }

  private skipWs(): void {
    const s = this.s;
    let i = this.i;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    this.i = i;
  }

  private number(): number {
    const s = this.s;
    const start = this.i;
    let i = start;
    if (s.charCodeAt(i) === 0x2d) i++;
    const first = s.charCodeAt(i);
    if (first === 0x30) {
      i++;
      if (isDigit(s.charCodeAt(i))) fail('leading zero in number', start);
    } else if (isDigit(first)) {
      while (isDigit(s.charCodeAt(i))) i++;
    } else {
      fail('invalid number', start);
    }
    if (s.charCodeAt(i) === 0x2e) {
      i++;
      if (!isDigit(s.charCodeAt(i))) fail('invalid number', start);
      while (isDigit(s.charCodeAt(i))) i++;
    }
    const e = s.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const sign = s.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(s.charCodeAt(i))) fail('invalid number', start);
      while (isDigit(s.charCodeAt(i))) i++;
    }
    const n = Number(s.slice(start, i));
    // JSON has no way to write Infinity; a literal that overflows to it is refused, not clamped.
    if (!Number.isFinite(n)) fail('number out of range', start);
    this.i = i;
    return n;
  }

  private string(): string {
    const s = this.s;
    const start = this.i;
    let i = start + 1;
    let run = i;
    let out = '';
    for (;;) {
      if (i >= s.length) fail('unterminated string', start);
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        this.i = i + 1;
        return out + s.slice(run, i);
      }
      if (c === 0x5c) {
        out += s.slice(run, i);
        const at = i;
        const e = s.charCodeAt(i + 1);
        i += 2;
        const simple = SIMPLE_ESCAPES.get(e);
        if (simple !== undefined) {
          out += simple;
        } else if (e === 0x75) {
          const unit = hex4(s, i);
          i += 4;
          if (unit < 0) fail('invalid \\u escape', at);
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const low = s.charCodeAt(i) === 0x5c && s.charCodeAt(i + 1) === 0x75 ? hex4(s, i + 2) : -1;
            if (low < 0xdc00 || low > 0xdfff) fail('lone surrogate escape', at);
            i += 6;
            out += String.fromCharCode(unit, low);
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            fail('lone surrogate escape', at);
          } else {
            out += String.fromCharCode(unit);
          }
        } else {
          fail('invalid escape', at);
        }
        run = i;
        continue;
      }
      if (c < 0x20) fail('control character in string', i);
      if (c >= 0xd800 && c <= 0xdfff) {
        // Only reachable for string input: UTF-8 bytes cannot decode to a lone surrogate.
        const next = s.charCodeAt(i + 1);
        if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) fail('lone surrogate', i);
        i += 2;
        continue;
      }
      i++;
    }
  }
}

const SIMPLE_ESCAPES = new Map<number, string>([
  [0x22, '"'],
  [0x5c, '\\'],
  [0x2f, '/'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [0x74, '\t'],
]);

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Value of four hex digits at i, or -1. */
function hex4(s: string, i: number): number {
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const c = s.charCodeAt(i + k);
    const d =
      c >= 0x30 && c <= 0x39
        ? c - 0x30
        : c >= 0x61 && c <= 0x66
          ? c - 0x57
          : c >= 0x41 && c <= 0x46
            ? c - 0x37
            : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}
