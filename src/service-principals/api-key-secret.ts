// The shape of an API key and its verifier (docs/api-keys.md). A key names its own row, so the
// server finds the one candidate by id and compares digests in constant time; the secret half is
// 256 random bits, so one SHA-256 is a sufficient verifier (as for refresh tokens).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { digestToken } from '../kernel/digest.ts';

export const API_KEY_PREFIX = 'pa_ak_';
const SECRET_BYTES = 32;
const SHAPE = /^pa_ak_([0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;

/** A new key for the row `id` (apk_…): the key itself, shown once, and what is stored. */
export function newApiKey(id: string): { key: string; digest: string } {
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { key: `${API_KEY_PREFIX}${id.slice('apk_'.length)}_${secret}`, digest: digestToken(secret) };
}

/** The row id and secret half of a presented key, or null when it is not shaped like one. */
export function parseApiKey(presented: string): { id: string; secret: string } | null {
  const m = SHAPE.exec(presented);
  return m?.[1] && m[2] ? { id: `apk_${m[1]}`, secret: m[2] } : null;
}

export const looksLikeApiKey = (presented: string): boolean => presented.startsWith(API_KEY_PREFIX);

/** Constant-time comparison of a presented secret half with a stored digest. */
export function apiKeySecretMatches(secret: string, storedDigest: string): boolean {
  const presented = Buffer.from(digestToken(secret), 'hex');
  const stored = Buffer.from(storedDigest, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
