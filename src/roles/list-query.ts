// Paged lists of the roles, groups, projects and service-principal APIs (doc 2, Limits: page
// size, keyset cursors bound to realm, route and filters). Items are ordered by id; a cursor holds
// the last id of its page and a digest of what it is bound to.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { problem } from '../platform/http/problem.ts';

export interface PageQuery<F extends string> {
  limit: number;
  /** The last id of the previous page. */
  after: string | null;
  filters: Partial<Record<F, string>>;
  binding: string;
}

export interface PageSizes {
  defaultPageSize: number;
  maxPageSize: number;
}

const MAX_CURSOR_CHARS = 512;
const MAX_FILTER_BYTES = 256;

function single(query: Record<string, unknown>, name: string): string | null {
  const v = query[name];
  if (v === undefined) return null;
  if (typeof v !== 'string') throw problem.invalidRequest(`give ${name} once`);
  return v;
}

/**
 * limit, cursor and the named filters. Unknown parameters are refused, so a misspelt filter never
 * silently lists everything.
 */
export function decodePageQuery<F extends string>(
  rawQuery: unknown,
  pages: PageSizes,
  /** Realm and route: a cursor from another list is refused. */
  route: string,
  filterNames: readonly F[],
): PageQuery<F> {
  const query = (rawQuery ?? {}) as Record<string, unknown>;
  const known = new Set<string>(['limit', 'cursor', ...filterNames]);
  for (const name of Object.keys(query)) {
    if (!known.has(name)) throw problem.invalidRequest(`unknown query parameter ${name.slice(0, 64)}`);
  }
  let limit = pages.defaultPageSize;
  const limitText = single(query, 'limit');
  if (limitText !== null) {
    if (!/^[0-9]{1,12}$/.test(limitText) || Number(limitText) < 1)
      throw problem.invalidRequest('limit must be a positive integer');
    // doc 2 Limits: larger values are reduced, not refused.
    limit = Math.min(Number(limitText), pages.maxPageSize);
  }
  const filters: Partial<Record<F, string>> = {};
  for (const name of filterNames) {
    const v = single(query, name);
    if (v === null) continue;
    if (v.length === 0 || Buffer.byteLength(v) > MAX_FILTER_BYTES)
      throw problem.invalidRequest(`${name} must be 1 to ${MAX_FILTER_BYTES} bytes`);
    filters[name] = v;
  }
  const binding = createHash('sha256')
    .update(JSON.stringify([route, filterNames.map((n) => filters[n] ?? null)]))
    .digest('base64url')
    .slice(0, 22);
  const cursor = single(query, 'cursor');
  return { limit, after: cursor === null ? null : openCursor(cursor, binding), filters, binding };
}

function openCursor(cursor: string, binding: string): string {
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
  if (!c || typeof c !== 'object' || c.b !== binding || typeof c.a !== 'string' || c.a.length > 256)
    throw invalid();
  return c.a;
}

/** Cuts the rows (fetched with limit + 1, ordered by id) to one page; null cursor on the last. */
export function pageOf<R extends { id: string }, T>(
  rows: readonly R[],
  q: PageQuery<string>,
  present: (row: R) => T,
): { items: T[]; next_cursor: string | null } {
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  const more = rows.length > q.limit && last !== undefined;
  return {
    items: page.map(present),
    next_cursor: more
      ? Buffer.from(JSON.stringify({ a: last.id, b: q.binding })).toString('base64url')
      : null,
  };
}
