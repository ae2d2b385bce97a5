// The client address of a request (docs/operations.md, "Behind a reverse proxy"): the socket peer,
// or, when that peer is inside server.trusted_proxies, the address the proxies forwarded. Budgets,
// sign-in flow rules and the request log all read `req.clientAddress`, never the socket.
//
// The forwarded list is walked from the right (the hop nearest to us) and every trusted hop is
// skipped: the first address that is not a trusted proxy is the client. Whatever a client wrote
// itself sits to the left of what our proxies appended, so it is never reached unless every hop
// after it is trusted. A value that is not an address (`unknown`, an obfuscated node, garbage)
// stops the walk at the last address known, so a malformed header can never choose the client.
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Which forwarding header names the client (server.proxy_headers). */
export type ProxyHeaders = 'auto' | 'forwarded' | 'x-forwarded';

/** What a request carries that the client address is read from (FastifyRequest fits). */
export interface AddressSource {
  headers: Record<string, string | string[] | undefined>;
  socket: { remoteAddress?: string | undefined };
}

// At most this many hops are walked (from the right); nothing legitimate has more.
const MAX_HOPS = 32;
const MAPPED_V4 = ipaddr.parseCIDR('::ffff:0:0/96');

/** The address as budgets and logs use it: IPv4-mapped IPv6 (`::ffff:127.0.0.1`) as plain IPv4. */
function parseAddress(text: string): Address | null {
  // ipaddr.js also reads classful shorthands (`10.1`, `0x7f.1`) as IPv4; only dotted quads count.
  if (!ipaddr.isValid(text) || (ipaddr.IPv4.isValid(text) && !ipaddr.IPv4.isValidFourPartDecimal(text)))
    return null;
  try {
    return ipaddr.process(text);
  } catch {
    return null;
  }
}

const render = (a: Address): string =>
  a.kind() === 'ipv6' ? (a as ipaddr.IPv6).toRFC5952String() : a.toString();

/** A CIDR of server.trusted_proxies; an IPv4-mapped IPv6 block becomes the IPv4 block it maps. */
function parseTrustedCidr(cidr: string): [Address, number] {
  const [range, bits] = ipaddr.parseCIDR(cidr);
  if (range.kind() === 'ipv6' && bits >= 96 && range.match(MAPPED_V4)) {
    return [(range as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [range, bits];
}

/** One hop of X-Forwarded-For: an address, `IPv4:port`, or `[IPv6]` with an optional port. */
function xffHop(raw: string): Address | null {
  const text = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return parseAddress(bracketed[1] as string);
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  return parseAddress(v4port ? (v4port[1] as string) : text);
}

/**
 * The `for` nodes of a Forwarded header (RFC 7239 section 4), left to right; null when the
 * header cannot be read at all. A node that names no address (`unknown`, `_hidden`, no `for`)
 * is null in the list.
 */
export function forwardedFor(header: string): (Address | null)[] | null {
  const nodes: (Address | null)[] = [];
  let i = 0;
  const n = header.length;
  let current: string | undefined;
  let sawFor = false;
  const endElement = () => {
    nodes.push(sawFor && current !== undefined ? forwardedNode(current) : null);
    current = undefined;
    sawFor = false;
  };
  while (i < n) {
    while (i < n && (header[i] === ' ' || header[i] === '\t')) i++;
    const nameStart = i;
    while (i < n && /[!#$%&'*+.^_`|~0-9A-Za-z-]/.test(header[i] as string)) i++;
    const name = header.slice(nameStart, i).toLowerCase();
    if (name === '' || header[i] !== '=') return null;
    i++;
    let value = '';
    if (header[i] === '"') {
      i++;
      for (;;) {
        if (i >= n) return null;
        const c = header[i] as string;
        if (c === '"') break;
        if (c === '\\') {
          i++;
          if (i >= n) return null;
        }
        value += header[i];
        i++;
      }
      i++;
    } else {
      const start = i;
      // Unquoted addresses with a colon or brackets break RFC 7239's grammar but are common.
      while (i < n && /[!#$%&'*+.^_`|~0-9A-Za-z:[\]-]/.test(header[i] as string)) i++;
      value = header.slice(start, i);
      if (value === '') return null;
    }
    if (name === 'for') {
      if (sawFor) return null; // a parameter may appear once per element
      sawFor = true;
      current = value;
    }
    while (i < n && (header[i] === ' ' || header[i] === '\t')) i++;
    if (i >= n) break;
    if (header[i] === ';') {
      i++;
      continue;
    }
    if (header[i] !== ',') return null;
    endElement();
    i++;
  }
  endElement();
  return nodes;
}

/** A Forwarded node: `IPv4[:port]` or `[IPv6][:port]`; ports may be obfuscated. */
function forwardedNode(node: string): Address | null {
  const v6 = /^\[([^\]]+)\](?::(?:\d{1,5}|_[A-Za-z0-9._-]+))?$/.exec(node);
  if (v6) {
    const a = parseAddress(v6[1] as string);
    return a?.kind() === 'ipv6' ? a : null;
  }
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(?:\d{1,5}|_[A-Za-z0-9._-]+))?$/.exec(node);
  return v4 ? parseAddress(v4[1] as string) : null;
}

const headerText = (v: string | string[] | undefined): string | null =>
  v === undefined ? null : Array.isArray(v) ? v.join(',') : v;

/**
 * Reads the client address of requests. Built once per listener from server.trusted_proxies and
 * server.proxy_headers.
 */
export class ClientAddresses {
  private readonly trusted: [Address, number][];
  private readonly headers: ProxyHeaders;

  constructor(trustedProxies: readonly string[], headers: ProxyHeaders = 'auto') {
    this.trusted = trustedProxies.map(parseTrustedCidr);
    this.headers = headers;
  }

  /** The client's address; null only when the socket has already gone. */
  of(req: AddressSource): string | null {
    const raw = req.socket.remoteAddress;
    const peer = raw === undefined ? null : parseAddress(raw);
    if (peer === null) return raw ?? null;
    if (this.trusted.length === 0 || !this.isTrusted(peer)) return render(peer);
    return render(this.forwardedClient(req, peer));
  }

  /** Whether the socket peer is inside server.trusted_proxies (so its trace context is taken). */
  peerIsTrusted(req: AddressSource): boolean {
    const raw = req.socket.remoteAddress;
    const peer = raw === undefined ? null : parseAddress(raw);
    return peer !== null && this.trusted.length > 0 && this.isTrusted(peer);
  }

  private isTrusted(a: Address): boolean {
    return this.trusted.some(([range, bits]) => range.kind() === a.kind() && a.match(range, bits));
  }

  /** The client a trusted peer's forwarding headers name (the peer itself when they name none). */
  private forwardedClient(req: AddressSource, peer: Address): Address {
    const forwarded = headerText(req.headers.forwarded);
    const xff = headerText(req.headers['x-forwarded-for']);
    const fromForwarded = () => {
      const nodes = forwarded === null ? null : forwardedFor(forwarded);
      return nodes === null ? peer : this.walk(nodes, peer);
    };
    const fromXff = () => (xff === null ? peer : this.walk(xff.split(',').map(xffHop), peer));
    if (this.headers === 'forwarded') return fromForwarded();
    if (this.headers === 'x-forwarded') return fromXff();
    if (forwarded === null) return fromXff();
    if (xff === null) return fromForwarded();
    // Both present: one of them may be a client's own, passed through by a proxy that writes only
    // the other. Unless they agree, the peer counts (server.proxy_headers picks one explicitly).
    const a = fromForwarded();
    const b = fromXff();
    return render(a) === render(b) ? a : peer;
  }

  /** From the nearest hop outwards: the first address that is not a trusted proxy. */
  private walk(hops: readonly (Address | null)[], peer: Address): Address {
    let client = peer;
    for (let i = hops.length - 1; i >= 0 && hops.length - i <= MAX_HOPS; i--) {
      const hop = hops[i];
      if (!hop) return client;
      client = hop;
      if (!this.isTrusted(hop)) return client;
    }
    return client;
  }
}

/** A client's network for the abuse budgets: the /24 of an IPv4 address, the /64 of an IPv6 one. */
export function networkOf(address: string | null | undefined): string | null {
  const a = address ? parseAddress(address.replace(/%.*$/, '')) : null;
  if (a === null) return null;
  if (a.kind() === 'ipv4') return `${(a as ipaddr.IPv4).octets.slice(0, 3).join('.')}.0/24`;
  return `${(a as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The client's address: the socket peer, or what trusted proxies forwarded (client-address.ts). */
    readonly clientAddress: string | null;
  }
}
