// Data residency for outbound deliveries (spec doc 2, Delivery semantics 3; Operator status object):
// when the operator lists allowed destinations, a destination's host must match one of them, at
// registration and again before every connection. A pattern is a host name, or `*.` and a domain
// for any host under it (not the domain itself). Host names compare in their ASCII (punycode)
// form, case-insensitively, without a trailing dot.

/** The host as compared: lower case, punycode, no trailing dot, IPv6 without brackets. */
export function normalizeHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  try {
    return new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return bare.toLowerCase();
  }
}

/** Checks and normalizes one pattern of privacy.residency.allowed_destinations. */
export function normalizeDestinationPattern(raw: string): string {
  const p = raw.trim();
  const wildcard = p.startsWith('*.');
  const host = wildcard ? p.slice(2) : p;
  if (host === '' || /[\s/*?#@]/.test(host) || host.startsWith('.'))
    throw new Error(`not a host name or *.domain pattern: ${JSON.stringify(raw)}`);
  return `${wildcard ? '*.' : ''}${normalizeHost(host)}`;
}

/** Whether a host may be reached: always when nothing is listed. */
export function residencyAllows(host: string, patterns: readonly string[]): boolean {
  if (patterns.length === 0) return true;
  const h = normalizeHost(host);
  return patterns.some((p) =>
    p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p,
  );
}
