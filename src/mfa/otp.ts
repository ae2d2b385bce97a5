// One-time codes: HOTP (RFC 4226) and TOTP (RFC 6238) with HMAC-SHA-1 (and SHA-256 or SHA-512 for
// TOTP authenticators imported from other systems, RFC 6238 section 1.2), plus the verification
// rules the sign-in steps and self-service endpoints share (spec: Limits, HOTP row; Endpoints,
// TOTP and HOTP rows). Callers persist the accepted step or counter; nothing here touches state.
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAX_COUNTER = (1n << 64n) - 1n;

function assertDigits(digits: number): void {
  // RFC 4226 section 5.3: 6 to 8 digits; more would exceed what 31 bits of truncation carry.
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) throw new RangeError('digits must be 6, 7 or 8');
}

function toCounter(counter: bigint | number): bigint {
  if (typeof counter === 'number' && !Number.isSafeInteger(counter)) {
    throw new RangeError('counter must be a safe integer');
  }
  const c = BigInt(counter);
  if (c < 0n || c > MAX_COUNTER) throw new RangeError('counter must fit in 64 unsigned bits');
  return c;
}

export type OtpAlgorithm = 'SHA1' | 'SHA256' | 'SHA512';

const HMAC_OF: Record<OtpAlgorithm, string> = { SHA1: 'sha1', SHA256: 'sha256', SHA512: 'sha512' };

export function hotp(
  key: Buffer,
  counter: bigint | number,
  digits = 6,
  algorithm: OtpAlgorithm = 'SHA1',
): string {
  assertDigits(digits);
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(toCounter(counter));
  const mac = createHmac(HMAC_OF[algorithm], key).update(message).digest();
  // Dynamic truncation, RFC 4226 section 5.4.
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(binary).padStart(digits, '0');
}

export function totpStep(unixMs: number, periodSeconds = 30): number {
  if (!Number.isInteger(periodSeconds) || periodSeconds <= 0) throw new RangeError('period must be positive');
  return Math.floor(unixMs / (periodSeconds * 1000));
}

export function totpAt(key: Buffer, step: number, digits = 6, algorithm: OtpAlgorithm = 'SHA1'): string {
  return hotp(key, step, digits, algorithm);
}

function isCodeShape(code: string, digits: number): boolean {
  return code.length === digits && /^[0-9]+$/.test(code);
}

// Both sides are ASCII digits of the same length here, so the buffers are equal in length.
function sameCode(expected: string, given: string): boolean {
  return timingSafeEqual(Buffer.from(expected, 'ascii'), Buffer.from(given, 'ascii'));
}

export interface VerifyTotpOptions {
  /** Steps accepted on each side of the current one (clock drift). Default 1. */
  window?: number;
  /** Highest step already accepted for this authenticator; that step and older ones are refused. */
  lastUsedStep?: number | null;
  digits?: number;
  periodSeconds?: number;
  algorithm?: OtpAlgorithm;
}

export type VerifyTotpResult = { ok: true; step: number } | { ok: false; reason: 'invalid' | 'replayed' };

export function verifyTotp(
  key: Buffer,
  code: string,
  nowMs: number,
  opts: VerifyTotpOptions = {},
): VerifyTotpResult {
  const { window = 1, lastUsedStep = null, digits = 6, periodSeconds = 30, algorithm = 'SHA1' } = opts;
  assertDigits(digits);
  if (!Number.isInteger(window) || window < 0) throw new RangeError('window must be a non-negative integer');
  if (!isCodeShape(code, digits)) return { ok: false, reason: 'invalid' };

  const current = totpStep(nowMs, periodSeconds);
  // Every candidate is computed and compared, so timing does not reveal which step matched.
  let matched: number | null = null;
  for (let step = Math.max(0, current - window); step <= current + window; step++) {
    // Keep the newest match: recording the highest step means this code string can never be
    // accepted again for any step in this window, even when two steps happen to share a code.
    if (sameCode(totpAt(key, step, digits, algorithm), code)) matched = step;
  }
  if (matched === null) return { ok: false, reason: 'invalid' };
  // Forward-only: the accepted step must be newer than every step accepted before.
  if (lastUsedStep !== null && matched <= lastUsedStep) return { ok: false, reason: 'replayed' };
  return { ok: true, step: matched };
}

export type VerifyHotpResult = { ok: true; nextCounter: number } | { ok: false };

/**
 * `counter` is the next counter the server expects; codes for counter .. counter + lookAhead are
 * accepted and the caller stores `nextCounter`, so the counter only ever moves forward.
 */
export function verifyHotp(
  key: Buffer,
  code: string,
  counter: number,
  lookAhead: number,
  digits = 6,
): VerifyHotpResult {
  assertDigits(digits);
  toCounter(counter);
  if (!Number.isInteger(lookAhead) || lookAhead < 0)
    throw new RangeError('lookAhead must be a non-negative integer');
  if (!isCodeShape(code, digits)) return { ok: false };

  let matched: number | null = null;
  for (let c = counter; c <= counter + lookAhead; c++) {
    // The first match is the token's likeliest position (RFC 4226 section 7.4); jumping to a
    // later collision would desynchronize the token.
    if (sameCode(hotp(key, c, digits), code) && matched === null) matched = c;
  }
  return matched === null ? { ok: false } : { ok: true, nextCounter: matched + 1 };
}
