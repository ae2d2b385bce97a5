// Prefixed identifiers. The body is a lower-case ULID (time-ordered, 26 Crockford base32
// characters), which the spec requires for outbox event ids and which sorts well everywhere else.
import { randomBytes, randomFillSync } from 'node:crypto';

export type IdPrefix =
  | 'rlm'
  | 'prt'
  | 'srq'
  | 'iae'
  | 'usr'
  | 'arc'
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
  | 'wta'
  | 'idp'
  | 'lid'
  | 'fdr'
  | 'mrg'
  | 'apk'
  | 'scc'
  | 'fxt'
  | 'dva'
  | 'iat'
  | 'ssf'
  | 'wlf'
  | 'arv'
  | 'wfl'
  | 'plg'
  | 'plv'
  | 'wrn'
  | 'hok'
  | 'hkc'
  | 'cta';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

// Random bytes are drawn from a pool refilled 4 KiB at a time (as crypto.randomUUID does): a
// separate randomBytes() call for every id and token cost several microseconds each on the token
// endpoint. Each byte is handed out once, and callers only read the slice they get.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function randomSlice(n: number): Buffer {
  if (n > POOL_BYTES / 8) return randomBytes(n);
  if (poolOffset + n > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    poolOffset = 0;
  }
  const slice = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return slice;
}

export function ulid(now = Date.now()): string {
  let out = '';
  let t = now;
  for (let i = 9; i >= 0; i--) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  const rnd = randomSlice(16);
  for (let i = 0; i < 16; i++) out += ALPHABET[(rnd[i] as number) % 32];
  return out;
}

export const newId = (prefix: IdPrefix, now?: number): string => `${prefix}_${ulid(now)}`;

/** Unguessable token material, base64url without padding. */
export const randomToken = (bytes = 32): string => randomSlice(bytes).toString('base64url');
