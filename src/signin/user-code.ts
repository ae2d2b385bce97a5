// User codes of the device authorization grant (RFC 8628 section 6.1): eight letters from an
// alphabet of consonants without look-alikes or vowels (no words spelt by accident), shown as
// XXXX-XXXX. 20^8 (about 2.6e10) values; a code lives for tokens.device_code_ttl and guesses spend
// the sign-in budgets of the start (docs/oauth-device.md).
import { randomInt } from 'node:crypto';

const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A fresh code, formatted for people: XXXX-XXXX. */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed, in the stored form (upper case, no separators), or null when it cannot be
 * a code: case, spaces and dashes are forgiven (RFC 8628 section 6.1 recommends this).
 */
export function normalizeUserCode(typed: string): string | null {
  const compact = typed.toUpperCase().replace(/[\s-]/g, '');
  if (compact.length !== USER_CODE_LENGTH) return null;
  for (const c of compact) if (!ALPHABET.includes(c)) return null;
  return compact;
}
