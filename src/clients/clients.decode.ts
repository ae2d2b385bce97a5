// The list query and keyset cursors of the clients administration API (docs/api-clients.md); the
// bodies are declared in clients.schema.ts.
import { type FieldError, problem } from '../platform/http/problem.ts';
import { CLIENT_STATES, CLIENT_TYPES } from './clients.schema.ts';

// ---- list query --------------------------------------------------------------------------------

export interface ListQuery {
  limit: number;
  cursor: string | null;
  type: (typeof CLIENT_TYPES)[number] | null;
  state: (typeof CLIENT_STATES)[number] | null;
}

const QUERY_MEMBERS = new Set(['limit', 'cursor', 'type', 'state']);

/** Query parameters of GET /clients; anything unexpected is 400 invalid_request. */
export function decodeListQuery(
  query: unknown,
  limits: { defaultPageSize: number; maxPageSize: number },
): ListQuery {
  const q = (query ?? {}) as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const [k, v] of Object.entries(q)) {
    if (!QUERY_MEMBERS.has(k)) errors.push({ field: k, code: 'unknown_member' });
    else if (typeof v !== 'string') errors.push({ field: k, code: 'type', detail: 'given once' });
  }
  const str = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : null);
  let limit = limits.defaultPageSize;
  const rawLimit = str('limit');
  if (rawLimit !== null) {
    if (!/^[0-9]{1,9}$/.test(rawLimit) || Number(rawLimit) < 1) {
      errors.push({ field: 'limit', code: 'type', detail: 'a positive integer' });
    } else limit = Math.min(Number(rawLimit), limits.maxPageSize); // larger values are reduced
  }
  const oneOf = <V extends readonly string[]>(k: string, values: V): V[number] | null => {
    const v = str(k);
    if (v === null) return null;
    if ((values as readonly string[]).includes(v)) return v as V[number];
    errors.push({ field: k, code: 'not_allowed', detail: `one of: ${values.join(', ')}` });
    return null;
  };
  const type = oneOf('type', CLIENT_TYPES);
  const state = oneOf('state', CLIENT_STATES);
  if (errors.length > 0) throw problem.invalidRequest('invalid query parameters', errors);
  return { limit, cursor: str('cursor'), type, state };
}

// Keyset cursor: the last row id of the page, bound to realm, route and filters (spec doc 2,
// Limits: a cursor of another route is 400). It carries nothing secret, so it is not sealed.
interface CursorBody {
  v: 1;
  realm: string;
  route: string;
  filter: string;
  after: string;
}

export function encodeCursor(c: Omit<CursorBody, 'v'>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...c }), 'utf8').toString('base64url');
}

/** The row id to continue after; 400 invalid_request for a cursor of anything else. */
export function decodeCursor(raw: string, expect: Omit<CursorBody, 'v' | 'after'>): string {
  const invalid = () => problem.invalidRequest('invalid cursor');
  if (raw.length > 512 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    throw invalid();
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    body.v !== 1 ||
    body.realm !== expect.realm ||
    body.route !== expect.route ||
    body.filter !== expect.filter ||
    typeof body.after !== 'string' ||
    !/^cli_[0-9a-z]{26}$/.test(body.after)
  ) {
    throw invalid();
  }
  return body.after;
}
