// Distinguished names for tls_client_auth (RFC 8705 section 2.1.2, docs/oauth-mtls.md): the
// registered subject DN is a string in the RFC 4514 form, the certificate's subject is read by
// @peculiar/x509. Both become a list of RDNs of (attribute type OID, value), and two names are equal
// when the lists are after normalisation: attribute types by OID, multi-valued RDNs as sets, and
// values compared as caseIgnoreMatch does in essence (RFC 4518: Unicode NFKC, case folded, outer
// whitespace removed and inner runs of whitespace made one space). Values in the `#hex` BER form
// are not accepted.
import type { Name } from '@peculiar/x509';

export interface Ava {
  oid: string;
  value: string;
}
export type Rdn = Ava[];

// RFC 4514 section 3's descriptors, plus the short names @peculiar/x509 writes for its own types.
const DESCRIPTORS: Record<string, string> = {
  CN: '2.5.4.3',
  L: '2.5.4.7',
  ST: '2.5.4.8',
  O: '2.5.4.10',
  OU: '2.5.4.11',
  C: '2.5.4.6',
  STREET: '2.5.4.9',
  DC: '0.9.2342.19200300.100.1.25',
  UID: '0.9.2342.19200300.100.1.1',
  E: '1.2.840.113549.1.9.1',
  EMAILADDRESS: '1.2.840.113549.1.9.1',
  G: '2.5.4.42',
  GIVENNAME: '2.5.4.42',
  I: '2.5.4.43',
  SN: '2.5.4.4',
  SURNAME: '2.5.4.4',
  T: '2.5.4.12',
  TITLE: '2.5.4.12',
  SERIALNUMBER: '2.5.4.5',
};

const OID = /^\d+(?:\.\d+)+$/;
const DESCRIPTOR = /^[A-Za-z][A-Za-z0-9-]*$/;
const SPECIAL = new Set([' ', '"', '#', '+', ',', ';', '<', '=', '>', '\\']);
const HEX2 = /^[0-9A-Fa-f]{2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function oidOf(type: string): string | null {
  if (OID.test(type)) return type;
  if (!DESCRIPTOR.test(type)) return null;
  return DESCRIPTORS[type.toUpperCase()] ?? null;
}

/** One attribute value up to an unescaped `,` or `+`; the index after it, or null when malformed. */
function readValue(s: string, start: number): { value: string; end: number } | null {
  let out = '';
  let bytes: number[] = [];
  const flush = (): boolean => {
    if (bytes.length === 0) return true;
    try {
      out += utf8.decode(Uint8Array.from(bytes));
    } catch {
      return false;
    }
    bytes = [];
    return true;
  };
  let i = start;
  if (s[i] === '#') return null;
  for (; i < s.length; i++) {
    const ch = s[i] as string;
    if (ch === ',' || ch === '+') break;
    if (ch === '"') return null;
    if (ch !== '\\') {
      if (!flush()) return null;
      out += ch;
      continue;
    }
    const pair = s.slice(i + 1, i + 3);
    if (HEX2.test(pair)) {
      bytes.push(Number.parseInt(pair, 16));
      i += 2;
    } else if (SPECIAL.has(s[i + 1] ?? '')) {
      if (!flush()) return null;
      out += s[i + 1];
      i += 1;
    } else return null;
  }
  return flush() ? { value: out, end: i } : null;
}

/** An RFC 4514 string as RDNs in the order written; null when it cannot be read. */
export function parseDistinguishedName(s: string): Rdn[] | null {
  const rdns: Rdn[] = [];
  let rdn: Rdn = [];
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf('=', i);
    if (eq < 0) return null;
    const oid = oidOf(s.slice(i, eq).trim());
    if (oid === null) return null;
    const read = readValue(s, eq + 1);
    if (!read) return null;
    rdn.push({ oid, value: read.value });
    const sep = s[read.end];
    if (sep !== '+') {
      rdns.push(rdn);
      rdn = [];
    }
    if (sep !== undefined && read.end + 1 >= s.length) return null; // a trailing separator
    i = read.end + 1;
  }
  return rdns.length > 0 ? rdns : null;
}

/**
 * A certificate's name as RDNs in the order RFC 4514 writes them (section 2.1: the last RDN of the
 * encoded sequence first), as the registered string lists them.
 */
export function rdnsOfName(name: Name): Rdn[] {
  return name
    .toJSON()
    .map((rdn) =>
      Object.entries(rdn).flatMap(([type, values]) =>
        values.map((value) => ({ oid: oidOf(type) ?? type, value })),
      ),
    )
    .reverse();
}

const normaliseValue = (v: string): string => v.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();

function normalised(rdns: Rdn[]): string {
  const canonical = rdns.map((rdn) =>
    rdn
      .map((a) => [a.oid, normaliseValue(a.value)] as const)
      .sort((x, y) => (x[0] === y[0] ? x[1].localeCompare(y[1]) : x[0] < y[0] ? -1 : 1)),
  );
  return JSON.stringify(canonical);
}

/** Whether two names are equal under the normalisation above. */
export const sameName = (a: Rdn[], b: Rdn[]): boolean => normalised(a) === normalised(b);
