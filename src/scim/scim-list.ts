// Listing with a filter (RFC 7644 §3.4.2) within the spec's bounds (doc 2, Limits: SCIM): pages
// of at most 200, and a filter no index answers examines at most 20,000 resources (400 tooMany
// beyond). Equality on id, userName or externalId is answered from an index; anything else is
// evaluated over the resources in id order.
import { ScimError } from './scim-error.ts';
import type { Filter } from './scim-filter.ts';
import { matches } from './scim-filter-eval.ts';

export const MAX_PAGE = 200;
export const DEFAULT_PAGE = 100;
export const MAX_EXAMINED = 20_000;
const SCAN_BATCH = 1000;

export interface Paging {
  startIndex: number;
  count: number;
}

/** startIndex below 1 counts as 1 and count above 200 as 200 (RFC 7644 §3.4.2.4). */
export function decodePaging(query: Record<string, unknown>): Paging {
  const num = (name: string, fallback: number) => {
    const raw = query[name];
    if (raw === undefined) return fallback;
    if (typeof raw !== 'string' || !/^-?\d{1,9}$/.test(raw))
      throw new ScimError(400, 'invalidValue', `${name} must be an integer`);
    return Number(raw);
  };
  return {
    startIndex: Math.max(1, num('startIndex', 1)),
    count: Math.min(MAX_PAGE, Math.max(0, num('count', DEFAULT_PAGE))),
  };
}

export type IndexedKey = 'id' | 'user_name' | 'external_id' | 'display_name';

/** The indexed equality a filter requires of every match, if it has one. */
export function indexedTerm(
  f: Filter,
  keys: Record<string, IndexedKey>,
): { key: IndexedKey; value: string } | null {
  if (f.op === 'eq' && f.path.sub === null && typeof f.value === 'string') {
    const key = keys[f.path.attr.toLowerCase()];
    return key ? { key, value: f.value } : null;
  }
  if (f.op === 'and') return indexedTerm(f.left, keys) ?? indexedTerm(f.right, keys);
  return null;
}

export interface ListSource<R> {
  /** Rows an indexed equality names. */
  byIndex(key: IndexedKey, value: string): Promise<R[]>;
  count(): Promise<number>;
  page(limit: number, offset: number): Promise<R[]>;
  resource(row: R): Record<string, unknown>;
}

export interface ListResult<R> {
  total: number;
  rows: R[];
}

export async function listResources<R>(
  src: ListSource<R>,
  filter: Filter | null,
  keys: Record<string, IndexedKey>,
  paging: Paging,
): Promise<ListResult<R>> {
  const offset = paging.startIndex - 1;
  if (filter === null) {
    const total = await src.count();
    return { total, rows: paging.count === 0 ? [] : await src.page(paging.count, offset) };
  }
  const term = indexedTerm(filter, keys);
  let candidates: R[];
  if (term) {
    candidates = await src.byIndex(term.key, term.value);
  } else {
    if ((await src.count()) > MAX_EXAMINED)
      throw new ScimError(
        400,
        'tooMany',
        `a filter without an equality on an indexed attribute examines at most ${MAX_EXAMINED} resources`,
      );
    candidates = [];
    for (let at = 0; at < MAX_EXAMINED; at += SCAN_BATCH) {
      const batch = await src.page(SCAN_BATCH, at);
      candidates.push(...batch);
      if (batch.length < SCAN_BATCH) break;
    }
  }
  const hits = candidates.filter((r) => matches(src.resource(r), filter));
  return { total: hits.length, rows: hits.slice(offset, offset + paging.count) };
}
