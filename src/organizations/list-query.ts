// Query of the organizations context's list endpoints: limit, a keyset cursor bound to the realm,
// the route and the filters (doc 2, Limits: page size), and named filters. Unknown parameters are
// refused, so a misspelt filter never silently lists everything.
import { createHash } from 'node:crypto';
import { problem } from '../platform/http/problem.ts';

export interface ListQuery<F extends string> {
  limit: number;
  /** The last id of the previous page. */
  after: string | null;
  filters: Record<F, string | null>;
  /** Give it to makeCursor for the next page. */
  binding: string;
}

export interface FilterRule {
  /** Allowed values; any value when absent. */
  values?: readonly string[];
  /** Checks free values; true when acceptable. */
  check?: (v: string) => boolean;
}

const MAX_CURSOR_CHARS = 512;

function single(query: Record<string, unknown>, name: string): string | null {
  const v = query[name];
  if (v === undefined) return null;
  if (typeof v !== 'string') throw problem.invalidRequest(`give ${name} once`);
  return v;
}

export function decodeListQuery<F extends string>(
  rawQuery: unknown,
  pages: { defaultPageSize: number; maxPageSize: number },
  route: string,
  idPattern: RegExp,
  rules: Record<F, FilterRule>,
): ListQuery<F> {
  const query = (rawQuery ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(query)) {
    if (name !== 'limit' && name !== 'cursor' && !(name in rules))
      throw problem.invalidRequest(`unknown query parameter ${name.slice(0, 64)}`);
  }
  const limitText = single(query, 'limit');
  let limit = pages.defaultPageSize;
  if (limitText !== null) {
    if (!/^[0-9]{1,12}$/.test(limitText) || Number(limitText) < 1)
      throw problem.invalidRequest('limit must be a positive integer');
    // doc 2, Limits: larger values are reduced, not refused.
    limit = Math.min(Number(limitText), pages.maxPageSize);
  }
  const filters = {} as Record<F, string | null>;
  for (const name of Object.keys(rules) as F[]) {
    const value = single(query, name);
    const rule = rules[name];
    if (value !== null) {
      const ok = rule.values ? rule.values.includes(value) : (rule.check?.(value) ?? true);
      if (!ok) throw problem.invalidRequest(`invalid ${name} filter`);
    }
    filters[name] = value;
  }
  const binding = createHash('sha256')
    .update(JSON.stringify([route, filters]))
    .digest('base64url')
    .slice(0, 22);
  const cursor = single(query, 'cursor');
  const after = cursor === null ? null : openCursor(cursor, binding, idPattern);
  return { limit, after, filters, binding };
}

export function makeCursor(lastId: string, binding: string): string {
  return Buffer.from(JSON.stringify({ a: lastId, b: binding })).toString('base64url');
}

function openCursor(cursor: string, binding: string, idPattern: RegExp): string {
  const invalid = () => problem.invalidRequest('invalid cursor');
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const c = parsed as { a?: unknown; b?: unknown } | null;
  if (!c || typeof c !== 'object' || c.b !== binding || typeof c.a !== 'string' || !idPattern.test(c.a))
    throw invalid();
  return c.a;
}

/** One page of a list answer. */
export function pageBody<T, V>(
  page: { items: T[]; nextAfter: string | null },
  present: (item: T) => V,
  binding: string,
) {
  return {
    items: page.items.map(present),
    next_cursor: page.nextAfter === null ? null : makeCursor(page.nextAfter, binding),
  };
}
