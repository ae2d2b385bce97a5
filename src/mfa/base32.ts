// RFC 4648 section 6 base32, the alphabet authenticator apps read from otpauth:// URIs
// (spec: Limits, HOTP row; TOTP enrollment returns the secret this way).

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

const VALUES: ReadonlyMap<string, number> = new Map([...ALPHABET].map((c, i) => [c, i]));

export class Base32Error extends Error {
  override readonly name = 'Base32Error';
}

/** Upper case, no padding: the form authenticator apps expect in `secret=`. */
export function encodeBase32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Accepts what people type or paste: any case, spaces, with or without `=` padding. Padding may
 * only appear at the end; any other character, or a length no encoder produces, throws.
 */
export function decodeBase32(text: string): Buffer {
  const compact = text.replace(/ /g, '').toUpperCase();
  const body = compact.replace(/=+$/, '');
  // 1, 3 and 6 trailing characters cannot come from whole bytes (RFC 4648 section 6).
  if ([1, 3, 6].includes(body.length % 8)) throw new Base32Error('base32 input has an impossible length');
  const out = Buffer.alloc(Math.floor((body.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let i = 0;
  for (const c of body) {
    const v = VALUES.get(c);
    if (v === undefined) throw new Base32Error('base32 input has a character outside the alphabet');
    buffer = ((buffer << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[i++] = (buffer >>> bits) & 0xff;
    }
  }
  return out;
}
