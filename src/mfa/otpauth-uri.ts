// otpauth:// URIs in the Key Uri Format that authenticator apps scan, and new shared secrets
// (spec: Sign-in transaction state, one_time.totp; Limits, HOTP row for the 160-bit secret).
import { randomBytes } from 'node:crypto';
import { decodeBase32, encodeBase32 } from './base32.ts';

const SECRET_BYTES = 20; // 160 bits, the length RFC 4226 section 4 recommends

export function newTotpSecret(): Buffer {
  return randomBytes(SECRET_BYTES);
}

export interface OtpUriInput {
  issuer: string;
  account: string;
  /** base32; any case, spaces or padding are normalized away */
  secret: string;
  digits?: number;
}

export interface TotpUriInput extends OtpUriInput {
  period?: number;
}

export interface HotpUriInput extends OtpUriInput {
  counter: number;
}

// RFC 3986 percent-encoding: spaces become %20 (never '+', which some apps show literally) and a
// colon inside issuer or account is escaped so it cannot be read as the label separator. '@' is
// a valid path character and left readable, as in the format's own examples.
function encodeLabelPart(s: string): string {
  return encodeURIComponent(s).replace(/%40/g, '@');
}

function buildUri(type: 'totp' | 'hotp', input: OtpUriInput, extra: [string, string][]): string {
  const { issuer, account, digits = 6 } = input;
  if (issuer.length === 0 || account.length === 0) throw new RangeError('issuer and account are required');
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) throw new RangeError('digits must be 6, 7 or 8');
  // Re-encode so the URI always carries the canonical form (upper case, unpadded).
  const secret = encodeBase32(decodeBase32(input.secret));
  if (secret.length === 0) throw new RangeError('secret is empty');
  const params: [string, string][] = [
    ['secret', secret],
    ['issuer', issuer],
    ['algorithm', 'SHA1'],
    ['digits', String(digits)],
    ...extra,
  ];
  const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `otpauth://${type}/${encodeLabelPart(issuer)}:${encodeLabelPart(account)}?${query}`;
}

export function totpUri(input: TotpUriInput): string {
  const period = input.period ?? 30;
  if (!Number.isInteger(period) || period <= 0) throw new RangeError('period must be a positive integer');
  return buildUri('totp', input, [['period', String(period)]]);
}

export function hotpUri(input: HotpUriInput): string {
  if (!Number.isSafeInteger(input.counter) || input.counter < 0) throw new RangeError('counter must be >= 0');
  return buildUri('hotp', input, [['counter', String(input.counter)]]);
}
