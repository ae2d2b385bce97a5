// The bearer credential of a SCIM connector (docs/scim.md): the same construction as an API key
// (docs/api-keys.md), a row id and 256 random bits, of which only a SHA-256 digest is stored and
// compared in constant time. Only the prefix differs, so the two never pass for each other.
import { randomBytes } from 'node:crypto';
import { digestToken } from '../kernel/digest.ts';
import { apiKeySecretMatches } from '../service-principals/api-key-secret.ts';

const PREFIX = 'pa_scim_';
const SHAPE = /^pa_scim_([0-9a-z]{26})_([A-Za-z0-9_-]{43})$/;

export function newScimToken(id: string): { token: string; digest: string } {
  const secret = randomBytes(32).toString('base64url');
  return { token: `${PREFIX}${id.slice('scc_'.length)}_${secret}`, digest: digestToken(secret) };
}

export function parseScimToken(presented: string): { id: string; secret: string } | null {
  const m = SHAPE.exec(presented);
  return m?.[1] && m[2] ? { id: `scc_${m[1]}`, secret: m[2] } : null;
}

export const scimSecretMatches = apiKeySecretMatches;
