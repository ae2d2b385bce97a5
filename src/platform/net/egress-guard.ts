// The egress guard: which addresses outbound deliveries may connect to (spec doc 2, Delivery
// semantics 3). Only globally routable unicast addresses pass by default. Every IPv6 form that
// embeds an IPv4 address is either unwrapped (IPv4-mapped, ::ffff:a.b.c.d) or refused outright
// (NAT64, 6to4, Teredo, IPv4-compatible), because ipaddr.js labels those forms by their embedding
// and not by the address they carry. The guard classifies addresses, never host names: callers
// check the resolved and the connected address (see outbound-http.ts).

import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why an address is refused; `unicast` never appears as a reason. */
export type AddressClass =
  | 'unicast'
  | 'invalid'
  | 'unspecified'
  | 'broadcast'
  | 'multicast'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'carrier_grade_nat'
  | 'unique_local'
  | 'ipv4_embedding'
  | 'reserved';

/** Classes the development switch `delivery.allow_private_webhooks` lets through. */
const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set([
  'loopback',
  'private',
  'link_local',
  'carrier_grade_nat',
  'unique_local',
]);

/** Never reachable, whatever an operator lists: connecting there means "this host" or a group. */
const NEVER_CLASSES: ReadonlySet<AddressClass> = new Set([
  'invalid',
  'unspecified',
  'broadcast',
  'multicast',
]);

// 2000::/3 is the only IPv6 block allocated for global unicast; ipaddr.js calls everything it has
// no name for `unicast`, including ::/96 (IPv4-compatible in hex form) and unallocated space.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const IPV4_COMPATIBLE_V6 = ipaddr.parseCIDR('::/96');

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

// ipaddr.js reads `::a.b.c.d` (IPv4-compatible) as if it were `::ffff:a.b.c.d` (IPv4-mapped). The
// dotted tail is rewritten to two hex groups first so each form keeps its own meaning.
function dottedTailToHex(text: string): string | null {
  const m = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return text;
  const octets = m.slice(2, 6).map(Number);
  if (octets.some((o) => o > 255)) return null;
  const [a = 0, b = 0, c = 0, d = 0] = octets;
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** Parses an address literal; legacy IPv4 spellings (127.1, 0x7f.0.0.1, 0177.0.0.1) are accepted. */
export function parseAddress(text: string): Parsed | null {
  let t = text.trim();
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  const zone = t.indexOf('%');
  if (zone >= 0) t = t.slice(0, zone);
  try {
    if (t.includes(':')) {
      const hex = dottedTailToHex(t.toLowerCase());
      if (hex === null || isIP(hex) !== 6) return null;
      return ipaddr.IPv6.parse(hex);
    }
    return ipaddr.IPv4.isValid(t) ? ipaddr.IPv4.parse(t) : null;
  } catch {
    return null;
  }
}

function classifyV4(a: ipaddr.IPv4): AddressClass {
  switch (a.range()) {
    case 'unicast':
      return 'unicast';
    case 'unspecified':
      return 'unspecified';
    case 'broadcast':
      return 'broadcast';
    case 'multicast':
      return 'multicast';
    case 'loopback':
      return 'loopback';
    case 'private':
      return 'private';
    case 'linkLocal':
      return 'link_local';
    case 'carrierGradeNat':
      return 'carrier_grade_nat';
    default:
      // reserved (documentation, benchmarking, 192.0.0.0/24, 240/4), as112 and anything new.
      return 'reserved';
  }
}

function classifyV6(a: ipaddr.IPv6): AddressClass {
  if (a.isIPv4MappedAddress()) return classifyV4(a.toIPv4Address());
  switch (a.range()) {
    case 'unspecified':
      return 'unspecified';
    case 'multicast':
      return 'multicast';
    case 'loopback':
      return 'loopback';
    case 'linkLocal':
      return 'link_local';
    case 'uniqueLocal':
      return 'unique_local';
    case 'rfc6052':
    case '6to4':
    case 'teredo':
    case 'rfc6145':
      return 'ipv4_embedding';
    case 'unicast':
      if (a.match(IPV4_COMPATIBLE_V6)) return 'ipv4_embedding';
      return a.match(GLOBAL_UNICAST_V6) ? 'unicast' : 'reserved';
    default:
      return 'reserved';
  }
}

export function classifyAddress(text: string): AddressClass {
  const a = parseAddress(text);
  if (!a) return 'invalid';
  return a.kind() === 'ipv4' ? classifyV4(a as ipaddr.IPv4) : classifyV6(a as ipaddr.IPv6);
}

/** The operator's say over egress (`delivery.egress_allowlist`, `delivery.allow_private_webhooks`). */
export interface EgressPolicy {
  /** CIDRs reachable even when private or special. */
  allowlist: readonly string[];
  /** Development only: private, loopback, link-local, CGNAT and unique-local addresses pass. */
  allowPrivate: boolean;
}

export const STRICT_EGRESS: EgressPolicy = { allowlist: [], allowPrivate: false };

export type EgressVerdict =
  | { allowed: true; address: string }
  | { allowed: false; address: string; reason: AddressClass };

export class EgressGuard {
  readonly policy: EgressPolicy;
  /** Identifies the policy, so connection pools are never shared between two policies. */
  readonly key: string;
  readonly #allow: [Parsed, number][];

  constructor(policy: EgressPolicy) {
    this.policy = { allowlist: [...policy.allowlist], allowPrivate: policy.allowPrivate };
    this.key = `${policy.allowPrivate ? 'p' : 's'}|${[...policy.allowlist].sort().join(',')}`;
    this.#allow = policy.allowlist.map((c) => ipaddr.parseCIDR(c.trim()));
  }

  check(address: string): EgressVerdict {
    const parsed = parseAddress(address);
    if (!parsed) return { allowed: false, address, reason: 'invalid' };
    const cls = classifyAddress(address);
    if (cls === 'unicast') return { allowed: true, address };
    if (NEVER_CLASSES.has(cls)) return { allowed: false, address, reason: cls };
    if (this.#allowlisted(parsed)) return { allowed: true, address };
    if (this.policy.allowPrivate && PRIVATE_CLASSES.has(cls)) return { allowed: true, address };
    return { allowed: false, address, reason: cls };
  }

  #allowlisted(a: Parsed): boolean {
    // A mapped address is its IPv4 address, so an IPv4 allowlist entry covers both spellings.
    const plain =
      a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()
        ? (a as ipaddr.IPv6).toIPv4Address()
        : a;
    return this.#allow.some(([net, bits]) => plain.kind() === net.kind() && plain.match(net, bits));
  }
}
