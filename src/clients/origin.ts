// Origin values in configuration (spec doc 1, "Value formats used in configuration", Origin row) and
// matching of a request's Origin header against them (decision D17).
//
// Canonical form: `scheme://host[:port]` exactly as a browser serializes it. The one rewrite is removing
// the optional single trailing slash the row permits. Anything else the serializer would change (upper
// case scheme or host, a default port, numeric host spellings, uncompressed IPv6) is refused rather than
// rewritten, so a stored value is compared byte for byte with the header and the operator sees the
// mismatch at configuration time.

import { characterProblem, splitHostPort } from './redirect-uri.ts';

export type OriginRejection =
  | 'empty'
  | 'whitespace'
  | 'control_character'
  | 'non_ascii'
  | 'wildcard'
  | 'backslash'
  | 'not_absolute'
  | 'scheme_not_allowed'
  | 'missing_host'
  | 'userinfo'
  | 'fragment'
  | 'query'
  | 'path'
  | 'invalid_host'
  | 'invalid_port'
  | 'not_canonical';

export type OriginVerdict = { ok: true; origin: string } | { ok: false; reason: OriginRejection };

const fail = (reason: OriginRejection): OriginVerdict => ({ ok: false, reason });

export function validateOrigin(raw: string): OriginVerdict {
  if (typeof raw !== 'string' || raw.length === 0) return fail('empty');
  const chars = characterProblem(raw);
  if (chars) return fail(chars);
  if (raw.includes('*')) return fail('wildcard');
  if (raw.includes('\\')) return fail('backslash');
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
  if (!m) return fail('not_absolute');
  const scheme = (m[1] ?? '').toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return fail('scheme_not_allowed');
  const afterScheme = raw.slice(m[0].length);
  if (!afterScheme.startsWith('//')) return fail('missing_host');
  const body = afterScheme.slice(2);
  const end = body.search(/[/?#]/);
  const authority = end < 0 ? body : body.slice(0, end);
  const remainder = end < 0 ? '' : body.slice(end);
  if (authority.includes('@')) return fail('userinfo');
  if (remainder.includes('#')) return fail('fragment');
  if (remainder.includes('?')) return fail('query');
  if (remainder !== '' && remainder !== '/') return fail('path');
  const hp = splitHostPort(authority);
  if (!hp.ok) return fail(hp.reason);
  const origin = m[0] + '//' + authority;
  let serialized: string;
  try {
    serialized = new URL(origin).origin;
  } catch {
    return fail('invalid_host');
  }
  return serialized === origin ? { ok: true, origin } : fail('not_canonical');
}

/**
 * Whether a request's Origin header equals one of the allowed origins (canonical forms from
 * validateOrigin). The opaque origin `null` never matches, whatever is configured.
 */
export function originMatches(requestOrigin: string, allowed: readonly string[]): boolean {
  if (typeof requestOrigin !== 'string' || requestOrigin === '' || requestOrigin === 'null') return false;
  return allowed.some((a) => a !== 'null' && a === requestOrigin);
}
