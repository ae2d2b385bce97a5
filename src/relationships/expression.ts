// Permission expressions of relationship types (docs/authorization.md, "Relationship model"):
// names of relations or permissions of the same type combined with `+` (union), `&`
// (intersection) and `-` (exclusion), arrows `relation->name` that follow a relation to the
// objects it names, and parentheses. The three operators share one precedence and group from the
// left, so `a + b - c` is `(a + b) - c`; parentheses say anything else.

export type Expr =
  | { kind: 'name'; name: string }
  | { kind: 'arrow'; relation: string; target: string }
  | { kind: 'union' | 'intersection' | 'exclusion'; left: Expr; right: Expr };

export type ParseResult = { ok: true; expr: Expr } | { ok: false; error: string };

/** Names of relations, permissions and types. */
export const NAME = /^[a-z][a-z0-9_]{0,62}$/;
export const MAX_EXPRESSION_CHARS = 1024;
const MAX_NODES = 64;
const MAX_NESTING = 16;

const OPERATORS = { '+': 'union', '&': 'intersection', '-': 'exclusion' } as const;

type Token = { t: 'name'; v: string } | { t: 'op'; v: keyof typeof OPERATORS } | { t: '->' | '(' | ')' };

function tokenize(text: string): Token[] | string {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === ' ' || c === '\t') i++;
    else if (c === '-' && text[i + 1] === '>') {
      out.push({ t: '->' });
      i += 2;
    } else if (c === '+' || c === '&' || c === '-') {
      out.push({ t: 'op', v: c });
      i++;
    } else if (c === '(' || c === ')') {
      out.push({ t: c });
      i++;
    } else {
      const m = /^[a-z][a-z0-9_]*/.exec(text.slice(i));
      if (!m || !NAME.test(m[0])) return `unexpected character at position ${i + 1}`;
      out.push({ t: 'name', v: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

export function parseExpression(text: string): ParseResult {
  if (text.length === 0 || text.length > MAX_EXPRESSION_CHARS)
    return { ok: false, error: `must be 1 to ${MAX_EXPRESSION_CHARS} characters` };
  const tokens = tokenize(text);
  if (typeof tokens === 'string') return { ok: false, error: tokens };
  let pos = 0;
  let nodes = 0;
  const fail = (error: string): never => {
    throw new SyntaxError(error);
  };
  const node = <E extends Expr>(e: E): E => {
    if (++nodes > MAX_NODES) fail(`more than ${MAX_NODES} terms`);
    return e;
  };
  const term = (nesting: number): Expr => {
    const tok = tokens[pos++];
    if (tok?.t === '(') {
      if (nesting >= MAX_NESTING) fail(`parentheses nest deeper than ${MAX_NESTING}`);
      const inner = expr(nesting + 1);
      if (tokens[pos++]?.t !== ')') fail('missing )');
      return inner;
    }
    if (tok?.t !== 'name') return fail(tok ? 'expected a name or (' : 'expression ends too early');
    if (tokens[pos]?.t === '->') {
      pos++;
      const target = tokens[pos++];
      if (target?.t !== 'name') fail('expected a name after ->');
      return node({ kind: 'arrow', relation: tok.v, target: (target as { v: string }).v });
    }
    return node({ kind: 'name', name: tok.v });
  };
  const expr = (nesting: number): Expr => {
    let left = term(nesting);
    for (let tok = tokens[pos]; tok?.t === 'op'; tok = tokens[pos]) {
      pos++;
      left = node({ kind: OPERATORS[tok.v], left, right: term(nesting) });
    }
    return left;
  };
  try {
    const e = expr(0);
    if (pos !== tokens.length) fail(tokens[pos]?.t === ')' ? 'unbalanced )' : 'expected an operator');
    return { ok: true, expr: e };
  } catch (err) {
    if (err instanceof SyntaxError) return { ok: false, error: err.message };
    throw err;
  }
}

/** Names the expression uses on its own object (arrow targets excluded). */
export function localNames(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (e.kind === 'name') out.add(e.name);
  else if (e.kind === 'arrow') out.add(e.relation);
  else {
    localNames(e.left, out);
    localNames(e.right, out);
  }
  return out;
}

/** Names used directly (not through an arrow): the edges that could form a cycle. */
export function directNames(e: Expr, out: Set<string> = new Set()): Set<string> {
  if (e.kind === 'name') out.add(e.name);
  else if (e.kind !== 'arrow') {
    directNames(e.left, out);
    directNames(e.right, out);
  }
  return out;
}

export function arrowsOf(e: Expr, out: { relation: string; target: string }[] = []) {
  if (e.kind === 'arrow') out.push({ relation: e.relation, target: e.target });
  else if (e.kind !== 'name') {
    arrowsOf(e.left, out);
    arrowsOf(e.right, out);
  }
  return out;
}
