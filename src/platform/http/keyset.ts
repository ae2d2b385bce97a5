// Keyset paging shared by the administration lists (doc 2, Limits: page size and cursors). Items
// are ordered by id; a cursor carries the last id of its page and a digest of the realm, route and
// filters it was issued for, so it cannot be replayed against another list or filter.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { problem } from './problem.ts';

export interface PageSizes {
  defaultPageSize: number;
  maxPageSize: number;
}

/** One keyset page: the rows and the id to continue after, when more may follow. */
export interface Page<T> {
  items: T[];
  nextAfter: string | null;
}

const MAX_CURSOR_CHARS = 512;

/**
 * Reads single-valued query parameters. Unknown names are refused up front so a misspelt filter
 * never silently lists everything; a repeated one is refused only when it is read, which keeps the
 * error order of the callers (limit, then filters, then cursor).
 */
export function queryParams(
  rawQuery: unknown,
  filterNames: Iterable<string>,
): (name: string) => string | null {
  const query = (rawQuery ?? {}) as Record<string, unknown>;
  const known = new Set<string>(['limit', 'cursor', ...filterNames]);
  for (const name of Object.keys(query)) {
    if (!known.has(name)) throw problem.invalidRequest(`unknown query parameter ${name.slice(0, 64)}`);
  }
  return (name) => {
    const v = query[name];
    if (v === undefined) return null;
    if (typeof v !== 'string') throw problem.invalidRequest(`give ${name} once`);
    return v;
  };
}

/** Larger values are reduced to the maximum rather than refused (doc 2, Limits). */
export function pageLimit(limitText: string | null, pages: PageSizes): number {
  if (limitText === null) return pages.defaultPageSize;
  if (!/^[0-9]{1,12}$/.test(limitText) || Number(limitText) < 1)
    throw problem.invalidRequest('limit must be a positive integer');
  return Math.min(Number(limitText), pages.maxPageSize);
}

/** Digest of what a cursor is bound to; any JSON value that names the realm, route and filters. */
export function cursorBinding(boundTo: unknown): string {
  return createHash('sha256').update(JSON.stringify(boundTo)).digest('base64url').slice(0, 22);
}

export function makeCursor(lastId: string, binding: string): string {
  return Buffer.from(JSON.stringify({ a: lastId, b: binding })).toString('base64url');
}

/** The id to continue after; null without a cursor. Anything malformed or foreign is one error. */
export function openCursor(
  cursor: string | null,
  binding: string,
  isId: (id: string) => boolean,
  /** Composite keys (relationship tuples) need longer cursors than ids. */
  maxChars = MAX_CURSOR_CHARS,
): string | null {
  if (cursor === null) return null;
  const invalid = () => problem.invalidRequest('invalid cursor');
  if (cursor.length === 0 || cursor.length > maxChars || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const c = parsed as { a?: unknown; b?: unknown } | null;
  if (!c || typeof c !== 'object' || c.b !== binding || typeof c.a !== 'string' || !isId(c.a))
    throw invalid();
  return c.a;
}

/** Cuts rows fetched with limit + 1: the extra row only tells that another page exists. */
export function cutPage<R extends { id: string }>(rows: readonly R[], limit: number): Page<R> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, nextAfter: rows.length > limit && last ? last.id : null };
}

/** The wire form of a page. */
export function pageBody<T, V>(page: Page<T>, present: (item: T) => V, binding: string) {
  return {
    items: page.items.map(present),
    next_cursor: page.nextAfter === null ? null : makeCursor(page.nextAfter, binding),
  };
}
