// Webhook secrets and signatures (spec doc 2, Authentication 4-5): whsec_ plus the standard base64
// of 32 random bytes; each signature is HMAC-SHA-256 over `<id>.<timestamp>.<body>` and travels as
// `v1,<base64>`, several separated by spaces while a rotated secret is still honoured.
import { createHmac, randomBytes } from 'node:crypto';

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
