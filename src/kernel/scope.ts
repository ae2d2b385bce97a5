// Scope names (spec doc 1, "Value formats used in configuration", ScopeName row; Limits) and the
// space-delimited `scope` request parameter (RFC 6749 section 3.3).

export const MAX_SCOPE_NAME_LENGTH = 128;
export const MAX_SCOPES_PER_REQUEST = 50;

/** 1..128 characters from %x21, %x23-5B, %x5D-7E (RFC 6749 section 3.3 scope-token). */
export function isScopeName(s: unknown): s is string {
  return (
    typeof s === 'string' &&
    s.length >= 1 &&
    s.length <= MAX_SCOPE_NAME_LENGTH &&
    /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)
  );
}

export type ScopeParamRejection = 'empty' | 'invalid_delimiter' | 'invalid' | 'too_many';

export type ScopeParamResult = { ok: true; scopes: string[] } | { ok: false; reason: ScopeParamRejection };

/**
 * Parses a `scope` parameter: names separated by single spaces, no leading or trailing space.
 * Duplicates are dropped keeping the first occurrence; the limit applies to distinct names.
 * An empty string is refused here; callers treat an absent parameter separately.
 */
export function parseScopeParam(s: string, max = MAX_SCOPES_PER_REQUEST): ScopeParamResult {
  if (typeof s !== 'string' || s === '') return { ok: false, reason: 'empty' };
  const seen = new Set<string>();
  for (const token of s.split(' ')) {
    if (token === '') return { ok: false, reason: 'invalid_delimiter' };
    if (!isScopeName(token)) return { ok: false, reason: 'invalid' };
    seen.add(token);
    if (seen.size > max) return { ok: false, reason: 'too_many' };
  }
  return { ok: true, scopes: [...seen] };
}
