// The SCIM filter grammar (RFC 7644 §3.4.2.2), parsed by recursive descent into a small tree:
//   filter   := or
//   or       := and ("or" and)*
//   and      := unary ("and" unary)*
//   unary    := "not" "(" filter ")" | "(" filter ")" | path ("pr" | op value | "[" filter "]")
// Operators and keywords are case-insensitive. Size bounds (spec doc 2, Limits: SCIM) are held
// here: at most 1024 bytes of filter text and 64 nodes in the tree.
import { ScimError } from './scim-error.ts';

export const MAX_FILTER_BYTES = 1024;
export const MAX_FILTER_NODES = 64;

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';
const COMPARE_OPS: readonly string[] = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'];

/** An attribute path: optional schema URN, attribute, optional sub-attribute. */
export interface AttrPath {
  schema: string | null;
  attr: string;
  sub: string | null;
}

export type ScimValue = string | number | boolean | null;

export type Filter =
  | { op: 'and' | 'or'; left: Filter; right: Filter }
  | { op: 'not'; filter: Filter }
  | { op: 'pr'; path: AttrPath }
  | { op: CompareOp; path: AttrPath; value: ScimValue }
  | { op: 'valuePath'; path: AttrPath; filter: Filter };

type Token =
  | { kind: 'word'; text: string }
  | { kind: 'string'; value: string }
  | { kind: '(' | ')' | '[' | ']' }
  | { kind: 'end' };

const invalid = (detail: string) => new ScimError(400, 'invalidFilter', detail);

const WORD = /[A-Za-z0-9:._$+-]/;

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
    } else if (c === '(' || c === ')' || c === '[' || c === ']') {
      out.push({ kind: c });
      i++;
    } else if (c === '"') {
      // A JSON string: find its closing quote, skipping escaped characters, and let JSON decode it.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw invalid('a string in the filter is not closed');
      try {
        out.push({ kind: 'string', value: JSON.parse(text.slice(i, j + 1)) as string });
      } catch {
        throw invalid('a string in the filter is not valid JSON');
      }
      i = j + 1;
    } else if (WORD.test(c)) {
      let j = i;
      while (j < text.length && WORD.test(text[j] as string)) j++;
      out.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    } else {
      throw invalid(`unexpected character ${JSON.stringify(c)} in the filter`);
    }
  }
  out.push({ kind: 'end' });
  return out;
}

const NAME = /^[A-Za-z][A-Za-z0-9_$-]*$/;

/** `urn:…:User:name.givenName`, `name.givenName` or `emails` into its parts. */
export function parseAttrPath(text: string): AttrPath {
  let schema: string | null = null;
  let rest = text;
  if (/^urn:/i.test(text)) {
    const cut = text.lastIndexOf(':');
    schema = text.slice(0, cut);
    rest = text.slice(cut + 1);
    // A bare extension URN names the whole extension object.
    if (/^\d/.test(rest) || rest === '') throw invalid(`attribute path ${text} has no attribute`);
  }
  const [attr, sub, extra] = rest.split('.');
  if (!attr || !NAME.test(attr) || (sub !== undefined && !NAME.test(sub)) || extra !== undefined)
    throw invalid(`attribute path ${JSON.stringify(text)} is not valid`);
  return { schema, attr, sub: sub ?? null };
}

class Parser {
  private pos = 0;
  private nodes = 0;
  private readonly tokens: Token[];
  constructor(tokens: Token[]) {
    this.tokens = tokens;
  }

  private peek(): Token {
    return this.tokens[this.pos] as Token;
  }
  private next(): Token {
    return this.tokens[this.pos++] as Token;
  }
  private isWord(t: Token, w: string): boolean {
    return t.kind === 'word' && t.text.toLowerCase() === w;
  }
  private expect(kind: Token['kind']): void {
    if (this.next().kind !== kind) throw invalid(`expected ${kind} in the filter`);
  }
  private node<F extends Filter>(f: F): F {
    if (++this.nodes > MAX_FILTER_NODES) throw invalid(`a filter has at most ${MAX_FILTER_NODES} nodes`);
    return f;
  }

  whole(): Filter {
    const f = this.or(false);
    if (this.peek().kind !== 'end') throw invalid('unexpected text after the filter');
    return f;
  }

  private or(inValuePath: boolean): Filter {
    let left = this.and(inValuePath);
    while (this.isWord(this.peek(), 'or')) {
      this.next();
      left = this.node({ op: 'or', left, right: this.and(inValuePath) });
    }
    return left;
  }

  private and(inValuePath: boolean): Filter {
    let left = this.unary(inValuePath);
    while (this.isWord(this.peek(), 'and')) {
      this.next();
      left = this.node({ op: 'and', left, right: this.unary(inValuePath) });
    }
    return left;
  }

  private unary(inValuePath: boolean): Filter {
    const t = this.next();
    if (this.isWord(t, 'not')) {
      this.expect('(');
      const filter = this.or(inValuePath);
      this.expect(')');
      return this.node({ op: 'not', filter });
    }
    if (t.kind === '(') {
      const f = this.or(inValuePath);
      this.expect(')');
      return f;
    }
    if (t.kind !== 'word') throw invalid('expected an attribute path in the filter');
    const path = parseAttrPath(t.text);
    const after = this.next();
    if (after.kind === '[') {
      if (inValuePath) throw invalid('a value filter cannot nest another');
      const filter = this.or(true);
      this.expect(']');
      return this.node({ op: 'valuePath', path, filter });
    }
    if (after.kind !== 'word') throw invalid('expected an operator in the filter');
    const op = after.text.toLowerCase();
    if (op === 'pr') return this.node({ op: 'pr', path });
    if (!COMPARE_OPS.includes(op)) throw invalid(`unknown filter operator ${after.text}`);
    return this.node({ op: op as CompareOp, path, value: this.value() });
  }

  private value(): ScimValue {
    const t = this.next();
    if (t.kind === 'string') return t.value;
    if (t.kind === 'word') {
      const w = t.text.toLowerCase();
      if (w === 'true') return true;
      if (w === 'false') return false;
      if (w === 'null') return null;
      if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(t.text)) return Number(t.text);
    }
    throw invalid('expected a value (string, number, true, false or null) in the filter');
  }
}

/** Parses a filter of at most 1024 bytes and 64 nodes, or throws invalidFilter. */
export function parseFilter(text: string): Filter {
  if (Buffer.byteLength(text, 'utf8') > MAX_FILTER_BYTES)
    throw invalid(`a filter has at most ${MAX_FILTER_BYTES} bytes`);
  if (text.trim() === '') throw invalid('the filter is empty');
  return new Parser(tokenize(text)).whole();
}

/** A PATCH path (RFC 7644 §3.5.2): an attribute path, or a value path with an optional sub-attribute. */
export interface PatchPath {
  path: AttrPath;
  filter: Filter | null;
  /** The sub-attribute after `]`, as in `emails[type eq "work"].value`. */
  sub: string | null;
}

export function parsePatchPath(text: string): PatchPath {
  const invalidPath = () =>
    new ScimError(400, 'invalidPath', `the path ${JSON.stringify(text)} is not valid`);
  if (Buffer.byteLength(text, 'utf8') > MAX_FILTER_BYTES) throw invalidPath();
  const open = text.indexOf('[');
  if (open < 0) {
    try {
      return { path: parseAttrPath(text.trim()), filter: null, sub: null };
    } catch {
      throw invalidPath();
    }
  }
  const close = text.lastIndexOf(']');
  if (close < open) throw invalidPath();
  const tail = text.slice(close + 1);
  if (tail !== '' && !/^\.[A-Za-z][A-Za-z0-9_$-]*$/.test(tail)) throw invalidPath();
  try {
    const path = parseAttrPath(text.slice(0, open).trim());
    if (path.sub !== null) throw invalidPath();
    return {
      path,
      filter: parseFilter(text.slice(open + 1, close)),
      sub: tail === '' ? null : tail.slice(1),
    };
  } catch (e) {
    if (e instanceof ScimError && e.scimType === 'invalidFilter') throw invalidPath();
    throw e;
  }
}
