// Query of the organizations context's list endpoints: limit, a keyset cursor bound to the realm,
// the route and the filters (doc 2, Limits: page size), and named filters checked against rules.
import {
  cursorBinding,
  openCursor,
  type PageSizes,
  pageLimit,
  queryParams,
} from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';

export interface ListQuery<F extends string> {
  limit: number;
  /** The last id of the previous page. */
  after: string | null;
  filters: Record<F, string | null>;
  /** Give it to pageBody for the next page. */
  binding: string;
}

export interface FilterRule {
  /** Allowed values; any value when absent. */
  values?: readonly string[];
  /** Checks free values; true when acceptable. */
  check?: (v: string) => boolean;
}

export function decodeListQuery<F extends string>(
  rawQuery: unknown,
  pages: PageSizes,
  route: string,
  idPattern: RegExp,
  rules: Record<F, FilterRule>,
): ListQuery<F> {
  const param = queryParams(rawQuery, Object.keys(rules));
  const limit = pageLimit(param('limit'), pages);
  const filters = {} as Record<F, string | null>;
  for (const name of Object.keys(rules) as F[]) {
    const value = param(name);
    const rule = rules[name];
    if (value !== null) {
      const ok = rule.values ? rule.values.includes(value) : (rule.check?.(value) ?? true);
      if (!ok) throw problem.invalidRequest(`invalid ${name} filter`);
    }
    filters[name] = value;
  }
  const binding = cursorBinding([route, filters]);
  const after = openCursor(param('cursor'), binding, (id) => idPattern.test(id));
  return { limit, after, filters, binding };
}
