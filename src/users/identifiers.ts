// Identifier normalisation. Case folding is ASCII-only on purpose: Unicode folding maps the Kelvin
// sign to "k" and would let two distinct addresses collide (docs/decisions.md, Identifiers).

export type IdentifierType = 'email' | 'username' | 'phone';

const EMAIL =
  /^[^\s@"<>()[\]\\,;:]{1,64}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const E164 = /^\+[1-9][0-9]{6,14}$/;

export const asciiLower = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

export function identifierKey(type: IdentifierType, value: string): string {
  return type === 'phone' ? value : asciiLower(value);
}

export function isValidIdentifier(type: IdentifierType, value: string): boolean {
  switch (type) {
    case 'email':
      return Buffer.byteLength(value) <= 254 && EMAIL.test(value);
    case 'username':
      return USERNAME.test(value);
    case 'phone':
      return E164.test(value);
  }
}
