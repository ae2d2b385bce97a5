// Webhook secrets and signatures (spec doc 2, Authentication 4-5): whsec_ plus the standard base64
// of 32 random bytes; each signature is HMAC-SHA-256 over `<id>.<timestamp>.<body>` and travels as
// `v1,<base64>`, several separated by spaces while a rotated secret is still honoured.
import { createHmac, randomBytes } from 'node:crypto';
import type { KeyPurpose, RootKeyring } from '../platform/crypto/keyring.ts';

export const SECRET_PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The HMAC key of a secret. Secrets issued before padding was added have no trailing `=`, so the
 * padding is stripped and the rest decoded either way.
 */
export function keyOfSecret(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('not a webhook secret');
  return Buffer.from(secret.slice(SECRET_PREFIX.length).replace(/=+$/, ''), 'base64');
}

export function signOne(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', keyOfSecret(secret)).update(`${id}.${timestamp}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/** The Webhook-Signature value: one signature per secret, the current secret first. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets.map((s) => signOne(s, id, timestamp, body)).join(' ');
}

/** The sealed secrets of a row that signs: the current one and, for a while, the one before it. */
export interface SealedSecrets {
  current: string;
  previous: string | null;
  previousUntil: Date | string | null;
}

/** Secrets that sign now, the current one first; the previous one only until its time. */
export function openSigningSecrets(
  keyring: RootKeyring,
  purpose: KeyPurpose,
  sealed: SealedSecrets,
  aad: string,
  now: Date,
): string[] {
  const out = [keyring.decrypt(purpose, sealed.current, aad).toString('utf8')];
  if (sealed.previous && sealed.previousUntil && new Date(sealed.previousUntil) > now)
    out.push(keyring.decrypt(purpose, sealed.previous, aad).toString('utf8'));
  return out;
}
