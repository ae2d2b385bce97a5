// Prefixed identifiers. The body is a lower-case ULID (time-ordered, 26 Crockford base32
// characters), which the spec requires for outbox event ids and which sorts well everywhere else.
import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'rlm'
  | 'usr'
  | 'idf'
  | 'rol'
  | 'ras'
  | 'cli'
  | 'aud'
  | 'obx'
  | 'atx'
  | 'ses'
  | 'job'
  | 'org'
  | 'dec'
  | 'rcb'
  | 'csk'
  | 'res'
  | 'spr'
  | 'grt'
  | 'rtf'
  | 'mem'
  | 'inv'
  | 'jrq'
  | 'grp'
  | 'prj'
  | 'otr'
  | 'sgr'
  | 'ntf'
  | 'fen'
  | 'rdv'
  | 'whk'
  | 'whd'
  | 'aub'
  | 'alh'
  | 'run'
  | 'pkc'
  | 'wac'
  | 'wta';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function ulid(now = Date.now()): string {
  let out = '';
  let t = now;
  for (let i = 9; i >= 0; i--) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  const rnd = randomBytes(16);
  for (let i = 0; i < 16; i++) out += ALPHABET[(rnd[i] as number) % 32];
  return out;
}

export const newId = (prefix: IdPrefix, now?: number): string => `${prefix}_${ulid(now)}`;

/** Unguessable token material, base64url without padding. */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');
