// Redirect URI shape and matching: spec doc 1, "Value formats used in configuration" (RedirectURI row)
// and Limits; decisions D1 and D2 (docs/decisions.md).
//
// Every rule runs on the raw string. The WHATWG parser is consulted only twice: as an extra source of
// "this is loopback" (a deny signal, never an allow) and, last, to require that parsing does not change
// the string. The one tolerated difference is an empty path on http/https: `https://a.example` (or
// `https://a.example?x=1`) is accepted although the parser serializes it with a `/` after the authority.
// Matching stays exact, so that registration matches only requests that omit the slash too.
//
// Decisions beyond the row: `@` is refused anywhere before the query (not only in the authority), since
// parsers disagree about where an authority ends; non-ASCII is refused because the parser would
// percent-encode it; `0.0.0.0/8` and `[::]` count as loopback (browsers have reached local services
// through them); http loopback means exactly `127.0.0.1` or `[::1]` (RFC 8252 section 7.3).

import { Buffer } from 'node:buffer';
import { domainToUnicode } from 'node:url';

export type ClientType = 'web' | 'spa' | 'native' | 'device' | 'service' | 'saml';
export type Environment = 'development' | 'production';

export type RedirectUriRejection =
  | 'empty'
  | 'too_long'
  | 'whitespace'
  | 'control_character'
  | 'non_ascii'
  | 'wildcard'
  | 'backslash'
  | 'fragment'
  | 'not_absolute'
  | 'userinfo'
  | 'invalid_percent_encoding'
  | 'dot_segment'
  | 'encoded_separator'
  | 'missing_host'
  | 'invalid_host'
  | 'invalid_port'
  | 'https_needs_host'
  | 'loopback_in_production'
  | 'http_not_allowed'
  | 'scheme_not_allowed'
  | 'opaque_path'
  | 'invalid_url'
  | 'not_canonical';

export type RedirectUriVerdict = { ok: true } | { ok: false; reason: RedirectUriRejection };

export const MAX_REDIRECT_URI_BYTES = 2048;

const fail = (reason: RedirectUriRejection): RedirectUriVerdict => ({ ok: false, reason });

/** Whitespace of any Unicode class, then control and format characters, then anything else non-ASCII. */
export function characterProblem(raw: string): 'whitespace' | 'control_character' | 'non_ascii' | null {
  if (/\p{White_Space}/u.test(raw)) return 'whitespace';
  if (/[\p{Cc}\p{Cf}]/u.test(raw)) return 'control_character';
  if (/[^\x21-\x7e]/.test(raw)) return 'non_ascii';
  return null;
}

const LABEL = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?';
const REG_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`, 'i');

export type HostPort =
  | { ok: true; host: string; port: string | null }
  | { ok: false; reason: 'missing_host' | 'invalid_host' | 'invalid_port' };

/** Splits a raw authority (already free of userinfo) into host and port; checks their syntax only. */
export function splitHostPort(authority: string): HostPort {
  let host: string;
  let rest: string;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) return { ok: false, reason: 'invalid_host' };
    host = authority.slice(0, close + 1);
    rest = authority.slice(close + 1);
    if (!/^\[[0-9a-f:.]+\]$/i.test(host) || !host.includes(':')) return { ok: false, reason: 'invalid_host' };
    if (rest !== '' && !rest.startsWith(':')) return { ok: false, reason: 'invalid_host' };
  } else {
    const colon = authority.indexOf(':');
    host = colon < 0 ? authority : authority.slice(0, colon);
    rest = colon < 0 ? '' : authority.slice(colon);
    if (host === '') return { ok: false, reason: 'missing_host' };
    if (!REG_NAME.test(host)) return { ok: false, reason: 'invalid_host' };
  }
  if (rest === '') return { ok: true, host, port: null };
  const port = rest.slice(1);
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    return { ok: false, reason: 'invalid_port' };
  }
  return { ok: true, host, port };
}

/** Eight 16-bit groups of an IPv6 literal (without brackets), or null when it is not one. */
export function ipv6Groups(text: string): number[] | null {
  let s = text.toLowerCase();
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (dotted) {
    const [a = 0, b = 0, c = 0, d = 0] = dotted.slice(1, 5).map(Number);
    if ([a, b, c, d].some((n) => n > 255)) return null;
    s = s.slice(0, dotted.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (head === null || tail === null) return null;
  const given = head.length + tail.length;
  if (halves.length === 2 ? given > 7 : given !== 8) return null;
  return [...head, ...new Array<number>(8 - given).fill(0), ...tail];
}

function isLoopbackV4FirstOctet(octet: number): boolean {
  return octet === 127 || octet === 0;
}

/**
 * localhost names, 127.0.0.0/8 and 0.0.0.0/8 in dotted-quad form, and IPv6 `::`, `::1` and the
 * IPv4-mapped, IPv4-compatible and NAT64 (64:ff9b::/96) embeddings of those IPv4 blocks.
 * Other numeric spellings are covered by also classifying the parser's hostname.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  const name = h.endsWith('.') ? h.slice(0, -1) : h;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name.startsWith('[') && name.endsWith(']')) {
    const g = ipv6Groups(name.slice(1, -1));
    if (g === null) return false;
    const embedsV4 =
      (g.slice(0, 5).every((n) => n === 0) && (g[5] === 0 || g[5] === 0xffff)) ||
      (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((n) => n === 0));
    return embedsV4 && isLoopbackV4FirstOctet((g[6] ?? 0) >> 8);
  }
  const quad = /^(\d{1,3})\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.exec(name);
  return quad !== null && isLoopbackV4FirstOctet(Number(quad[1]));
}

const HTTP_LOOPBACK_LITERALS = new Set(['127.0.0.1', '[::1]']);
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9-]*(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;

type RawParts = { scheme: string; authority: string | null; authorityEnd: number; path: string };

function splitRaw(raw: string): RawParts | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(raw);
  if (!m) return null;
  const afterScheme = m[0].length;
  let authority: string | null = null;
  let pathStart = afterScheme;
  if (raw.startsWith('//', afterScheme)) {
    const end = raw.slice(afterScheme + 2).search(/[/?]/);
    pathStart = end < 0 ? raw.length : afterScheme + 2 + end;
    authority = raw.slice(afterScheme + 2, pathStart);
  }
  const q = raw.indexOf('?', pathStart);
  const path = raw.slice(pathStart, q < 0 ? raw.length : q);
  return { scheme: (m[1] ?? '').toLowerCase(), authority, authorityEnd: pathStart, path };
}

/** The per-scheme clauses of the RedirectURI row, on the raw parts; the parser only adds loopback signals. */
function checkScheme(
  { scheme, authority, path }: RawParts,
  parsed: URL | null,
  ctx: { clientType: ClientType; environment: Environment },
): RedirectUriRejection | null {
  if (scheme !== 'http' && scheme !== 'https') {
    if (ctx.clientType !== 'native' || !REVERSE_DOMAIN_SCHEME.test(scheme)) return 'scheme_not_allowed';
    if (authority === null) return path.startsWith('/') ? null : 'opaque_path';
    const hp = splitHostPort(authority);
    return hp.ok ? null : hp.reason;
  }
  if (authority === null || authority === '') return scheme === 'https' ? 'https_needs_host' : 'missing_host';
  const hp = splitHostPort(authority);
  if (!hp.ok) return hp.reason === 'missing_host' && scheme === 'https' ? 'https_needs_host' : hp.reason;
  const host = hp.host.toLowerCase();
  const production = ctx.environment === 'production';
  if (scheme === 'https') {
    const loopback = isLoopbackHost(host) || (parsed !== null && isLoopbackHost(parsed.hostname));
    return loopback && production ? 'loopback_in_production' : null;
  }
  if (host === 'localhost') return production ? 'loopback_in_production' : null;
  const nativeOrDevice = ctx.clientType === 'native' || ctx.clientType === 'device';
  return HTTP_LOOPBACK_LITERALS.has(host) && nativeOrDevice ? null : 'http_not_allowed';
}

/** Shape check of a redirect URI for registration or an authorization request. */
export function validateRedirectUri(
  raw: string,
  ctx: { clientType: ClientType; environment: Environment },
): RedirectUriVerdict {
  if (typeof raw !== 'string' || raw.length === 0) return fail('empty');
  if (Buffer.byteLength(raw, 'utf8') > MAX_REDIRECT_URI_BYTES) return fail('too_long');
  const chars = characterProblem(raw);
  if (chars) return fail(chars);
  if (raw.includes('*')) return fail('wildcard');
  if (raw.includes('\\')) return fail('backslash');
  if (raw.includes('#')) return fail('fragment');
  const parts = splitRaw(raw);
  if (!parts) return fail('not_absolute');
  const { scheme, authority, path } = parts;
  if (authority?.includes('@') || path.includes('@')) return fail('userinfo');
  if (/%(?![0-9a-f]{2})/i.test(raw)) return fail('invalid_percent_encoding');
  if (path.split('/').some((seg) => seg === '.' || seg === '..')) return fail('dot_segment');
  // Any depth of %25 wrapping an encoded dot, slash or backslash (decision D2: path only).
  if (/%(?:25)*(?:2e|2f|5c)/i.test(path)) return fail('encoded_separator');

  let parsed: URL | null = null;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = null;
  }
  const schemeProblem = checkScheme(parts, parsed, ctx);
  if (schemeProblem) return fail(schemeProblem);

  if (parsed === null || hasBrokenPunycode(parsed.hostname)) return fail('invalid_url');
  if (parsed.href === raw) return { ok: true };
  const rootSlashForm = raw.slice(0, parts.authorityEnd) + '/' + raw.slice(parts.authorityEnd);
  const special = scheme === 'http' || scheme === 'https';
  if (special && path === '' && parsed.href === rootSlashForm) return { ok: true };
  return fail('not_canonical');
}

/**
 * A label in ACE form (`xn--`) that does not decode. Node.js 20's parser refuses such a host and
 * Node.js 22 and later keep it as it is; the rule must not depend on the Node.js version. Node.js 20
 * decodes a broken label to an empty string, later versions leave it in ACE form.
 */
function hasBrokenPunycode(hostname: string): boolean {
  return hostname.split('.').some((label) => {
    if (!label.startsWith('xn--')) return false;
    const decoded = domainToUnicode(label);
    return decoded === '' || decoded.startsWith('xn--');
  });
}

const LOOPBACK_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::([0-9]{1,5}))?([/?].*)?$/s;

function loopbackParts(uri: string): { host: string; port: string | null; rest: string } | null {
  const m = LOOPBACK_REDIRECT.exec(uri);
  if (!m) return null;
  const port = m[2] ?? null;
  if (port !== null && (port.startsWith('0') || Number(port) > 65535)) return null;
  return { host: m[1] ?? '', port, rest: m[3] ?? '' };
}

/**
 * Whether a requested redirect URI equals one registered for the client: exact comparison of raw
 * strings, except that native clients on http loopback IP literals may use any port (decision D1).
 */
export function matchRedirectUri(
  requested: string,
  registered: readonly string[],
  clientType: ClientType,
): boolean {
  if (registered.includes(requested)) return true;
  if (clientType !== 'native') return false;
  const req = loopbackParts(requested);
  if (req === null) return false;
  return registered.some((r) => {
    const reg = loopbackParts(r);
    return reg !== null && reg.host === req.host && reg.rest === req.rest;
  });
}
