// Recovery codes: generated once, shown once (spec: Sign-in transaction state, one_time
// recovery_codes) and stored only as digests; using one moves the account as "Account states" says.
import { createHash, randomBytes } from 'node:crypto';

// 32 symbols without 0, 1, l and o, which people misread. A power of two lets each random byte
// map to a symbol without bias; 10 symbols carry 10 * 5 = 50 bits.
export const RECOVERY_CODE_ALPHABET = '23456789abcdefghijkmnpqrstuvwxyz';
const CODE_LENGTH = 10;
const GROUP = 5;

function randomCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  let code = '';
  for (const b of bytes) code += RECOVERY_CODE_ALPHABET[b & 31];
  return `${code.slice(0, GROUP)}-${code.slice(GROUP)}`;
}

/** Display form `xxxxx-xxxxx`, distinct within the set. */
export function generateRecoveryCodes(n = 10): string[] {
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new RangeError('n must be between 1 and 100');
  const codes = new Set<string>();
  while (codes.size < n) codes.add(randomCode());
  return [...codes];
}

/**
 * What the user typed, in the form that was hashed: whitespace and hyphens removed, ASCII letters
 * lowered. Other characters are kept (not Unicode-folded), so they simply fail to match.
 */
export function normalizeRecoveryCode(input: string): string {
  return input.replace(/[\s-]/g, '').replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** SHA-256 hex of the normalized code: the codes are random, so no salt or slow hash is needed. */
export function recoveryCodeDigest(code: string): string {
  return createHash('sha256').update(normalizeRecoveryCode(code), 'utf8').digest('hex');
}
