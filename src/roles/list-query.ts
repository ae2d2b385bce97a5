// Paged lists of the roles, groups, projects and service-principal APIs (doc 2, Limits: page
// size, keyset cursors bound to realm, route and filters). Filters are free text of bounded size.
import { Buffer } from 'node:buffer';
import {
  cursorBinding,
  cutPage,
  openCursor,
  type PageSizes,
  pageBody,
  pageLimit,
  queryParams,
} from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';

export interface PageQuery<F extends string> {
  limit: number;
  /** The last id of the previous page. */
  after: string | null;
  filters: Partial<Record<F, string>>;
  binding: string;
}

const MAX_FILTER_BYTES = 256;
const MAX_ID_CHARS = 256;

/** limit, cursor and the named filters. */
export function decodePageQuery<F extends string>(
  rawQuery: unknown,
  pages: PageSizes,
  /** Realm and route: a cursor from another list is refused. */
  route: string,
  filterNames: readonly F[],
): PageQuery<F> {
  const param = queryParams(rawQuery, filterNames);
  const limit = pageLimit(param('limit'), pages);
  const filters: Partial<Record<F, string>> = {};
  for (const name of filterNames) {
    const v = param(name);
    if (v === null) continue;
    if (v.length === 0 || Buffer.byteLength(v) > MAX_FILTER_BYTES)
      throw problem.invalidRequest(`${name} must be 1 to ${MAX_FILTER_BYTES} bytes`);
    filters[name] = v;
  }
  const binding = cursorBinding([route, filterNames.map((n) => filters[n] ?? null)]);
  const after = openCursor(param('cursor'), binding, (id) => id.length <= MAX_ID_CHARS);
  return { limit, after, filters, binding };
}

/** Cuts the rows (fetched with limit + 1, ordered by id) to one page; null cursor on the last. */
export function pageOf<R extends { id: string }, T>(
  rows: readonly R[],
  q: PageQuery<string>,
  present: (row: R) => T,
): { items: T[]; next_cursor: string | null } {
  return pageBody(cutPage(rows, q.limit), present, q.binding);
}
