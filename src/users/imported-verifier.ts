// Password verifiers imported from other systems (spec doc 2, Migration adapters; docs/migration.md,
// Password verifiers): one canonical form for every source format, stored in
// password_credentials.hash as `$pa-import$v1$` + JSON until the account's first sign-in re-hashes
// the password to the realm's Argon2id. The form is self-describing, so a verifier moved to the
// password history still verifies. The bounds keep one verification affordable on a sign-in.

export const IMPORTED_PREFIX = '$pa-import$v1$';

export type Pbkdf2Digest = 'sha1' | 'sha256' | 'sha512';
export type Argon2Type = 'argon2id' | 'argon2i' | 'argon2d';

export type ImportedVerifier =
  /** bcrypt: `$2a$`, `$2b$`, `$2y$`; the 16-byte salt and the 23-byte digest decoded from bcrypt's base64. */
  | { kind: 'bcrypt'; cost: number; salt: Buffer; digest: Buffer }
  | { kind: 'pbkdf2'; digest: Pbkdf2Digest; iterations: number; salt: Buffer; key: Buffer }
  /** scrypt with N = 2^logN. */
  | { kind: 'scrypt'; logN: number; r: number; p: number; salt: Buffer; key: Buffer }
  | {
      kind: 'argon2';
      type: Argon2Type;
      version: 16 | 19;
      memoryKib: number;
      iterations: number;
      parallelism: number;
      salt: Buffer;
      key: Buffer;
    }
  /**
   * Firebase's scrypt variant (N = 2^memCost, r = rounds, p = 1, then AES-256-CTR of the signer
   * key); `sealedKey` is the project's signer key and salt separator, sealed under the root key.
   */
  | {
      kind: 'firebase-scrypt';
      rounds: number;
      memCost: number;
      salt: Buffer;
      hash: Buffer;
      sealedKey: string;
    };

export type ImportedKind = ImportedVerifier['kind'];

/** Bounds of each parameter; outside them a verifier is refused at import (docs/migration.md). */
export const VERIFIER_BOUNDS = {
  bcryptCost: { min: 4, max: 14 },
  pbkdf2Iterations: { min: 1, max: 1_000_000 },
  argon2MemoryKib: { min: 8, max: 262_144 },
  argon2Iterations: { min: 1, max: 20 },
  argon2Parallelism: { min: 1, max: 16 },
  scryptLogN: { min: 1, max: 20 },
  scryptR: { min: 1, max: 32 },
  scryptP: { min: 1, max: 16 },
  firebaseRounds: { min: 1, max: 32 },
  firebaseMemCost: { min: 1, max: 20 },
  saltBytes: { min: 1, max: 64 },
  keyBytes: { min: 16, max: 128 },
} as const;

/** scrypt's working memory (128 * N * r bytes) may not pass this. */
export const SCRYPT_MAX_MEMORY = 256 * 1024 * 1024;

const within = (n: number, b: { min: number; max: number }) =>
  Number.isInteger(n) && n >= b.min && n <= b.max;

/** Why the parameters are out of bounds, or null when they are within them. */
export function boundsProblem(v: ImportedVerifier): string | null {
  const B = VERIFIER_BOUNDS;
  const salt = 'salt' in v ? v.salt.length : 0;
  if (v.kind !== 'bcrypt' && !within(salt, B.saltBytes)) return `salt must be 1 to 64 bytes`;
  switch (v.kind) {
    case 'bcrypt':
      return within(v.cost, B.bcryptCost)
        ? null
        : `bcrypt cost must be ${B.bcryptCost.min} to ${B.bcryptCost.max}`;
    case 'pbkdf2':
      if (!within(v.iterations, B.pbkdf2Iterations)) return 'iterations must be 1 to 1000000';
      return within(v.key.length, B.keyBytes) ? null : 'the derived key must be 16 to 128 bytes';
    case 'scrypt':
      if (!within(v.logN, B.scryptLogN) || !within(v.r, B.scryptR) || !within(v.p, B.scryptP))
        return 'scrypt parameters out of range (N up to 2^20, r up to 32, p up to 16)';
      if (128 * 2 ** v.logN * v.r > SCRYPT_MAX_MEMORY) return 'scrypt memory (128 * N * r) above 256 MiB';
      return within(v.key.length, B.keyBytes) ? null : 'the derived key must be 16 to 128 bytes';
    case 'argon2':
      if (!within(v.memoryKib, B.argon2MemoryKib)) return 'argon2 memory must be 8 to 262144 KiB';
      if (!within(v.iterations, B.argon2Iterations)) return 'argon2 iterations must be 1 to 20';
      if (!within(v.parallelism, B.argon2Parallelism)) return 'argon2 parallelism must be 1 to 16';
      if (v.memoryKib < 8 * v.parallelism) return 'argon2 memory must be at least 8 KiB per lane';
      return within(v.key.length, B.keyBytes) ? null : 'the hash must be 16 to 128 bytes';
    case 'firebase-scrypt':
      if (!within(v.rounds, B.firebaseRounds)) return 'rounds must be 1 to 32';
      if (!within(v.memCost, B.firebaseMemCost)) return 'memory_cost must be 1 to 20';
      if (128 * 2 ** v.memCost * v.rounds > SCRYPT_MAX_MEMORY)
        return 'scrypt memory (128 * 2^memory_cost * rounds) above 256 MiB';
      return v.hash.length >= 1 && v.hash.length <= 128 ? null : 'the hash must be 1 to 128 bytes';
  }
}

// ---- the stored form ----------------------------------------------------------------------------

type Wire = Record<string, string | number>;

const b64 = (b: Buffer) => b.toString('base64');

function toWire(v: ImportedVerifier): Wire {
  switch (v.kind) {
    case 'bcrypt':
      return { kind: v.kind, cost: v.cost, salt: b64(v.salt), digest: b64(v.digest) };
    case 'pbkdf2':
      return { kind: v.kind, digest: v.digest, iterations: v.iterations, salt: b64(v.salt), key: b64(v.key) };
    case 'scrypt':
      return { kind: v.kind, ln: v.logN, r: v.r, p: v.p, salt: b64(v.salt), key: b64(v.key) };
    case 'argon2':
      return {
        kind: v.kind,
        type: v.type,
        v: v.version,
        m: v.memoryKib,
        t: v.iterations,
        p: v.parallelism,
        salt: b64(v.salt),
        key: b64(v.key),
      };
    case 'firebase-scrypt':
      return {
        kind: v.kind,
        rounds: v.rounds,
        mem: v.memCost,
        salt: b64(v.salt),
        hash: b64(v.hash),
        sealed: v.sealedKey,
      };
  }
}

export const encodeImported = (v: ImportedVerifier): string =>
  `${IMPORTED_PREFIX}${JSON.stringify(toWire(v))}`;

export const isImported = (hash: string): boolean => hash.startsWith(IMPORTED_PREFIX);

export class ImportedVerifierError extends Error {
  override readonly name = 'ImportedVerifierError';
}

function num(w: Record<string, unknown>, k: string): number {
  const v = w[k];
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new ImportedVerifierError(`${k} is not an integer`);
  return v;
}
function str(w: Record<string, unknown>, k: string): string {
  const v = w[k];
  if (typeof v !== 'string') throw new ImportedVerifierError(`${k} is not a string`);
  return v;
}
const buf = (w: Record<string, unknown>, k: string) => Buffer.from(str(w, k), 'base64');

function oneOf<T extends string>(v: string, allowed: readonly T[], what: string): T {
  if (!(allowed as readonly string[]).includes(v)) throw new ImportedVerifierError(`unknown ${what} ${v}`);
  return v as T;
}

/** Reads a stored imported verifier back, checking its bounds; throws ImportedVerifierError. */
export function decodeImported(hash: string): ImportedVerifier {
  if (!isImported(hash)) throw new ImportedVerifierError('not an imported verifier');
  let w: Record<string, unknown>;
  try {
    w = JSON.parse(hash.slice(IMPORTED_PREFIX.length)) as Record<string, unknown>;
  } catch {
    throw new ImportedVerifierError('the stored form is not JSON');
  }
  const kind = oneOf(str(w, 'kind'), ['bcrypt', 'pbkdf2', 'scrypt', 'argon2', 'firebase-scrypt'], 'kind');
  let v: ImportedVerifier;
  switch (kind) {
    case 'bcrypt':
      v = { kind, cost: num(w, 'cost'), salt: buf(w, 'salt'), digest: buf(w, 'digest') };
      if (v.salt.length !== 16 || v.digest.length !== 23)
        throw new ImportedVerifierError('bad bcrypt lengths');
      break;
    case 'pbkdf2':
      v = {
        kind,
        digest: oneOf(str(w, 'digest'), ['sha1', 'sha256', 'sha512'], 'digest'),
        iterations: num(w, 'iterations'),
        salt: buf(w, 'salt'),
        key: buf(w, 'key'),
      };
      break;
    case 'scrypt':
      v = {
        kind,
        logN: num(w, 'ln'),
        r: num(w, 'r'),
        p: num(w, 'p'),
        salt: buf(w, 'salt'),
        key: buf(w, 'key'),
      };
      break;
    case 'argon2': {
      const version = num(w, 'v');
      if (version !== 16 && version !== 19) throw new ImportedVerifierError('unknown argon2 version');
      v = {
        kind,
        type: oneOf(str(w, 'type'), ['argon2id', 'argon2i', 'argon2d'], 'argon2 type'),
        version,
        memoryKib: num(w, 'm'),
        iterations: num(w, 't'),
        parallelism: num(w, 'p'),
        salt: buf(w, 'salt'),
        key: buf(w, 'key'),
      };
      break;
    }
    case 'firebase-scrypt':
      v = {
        kind,
        rounds: num(w, 'rounds'),
        memCost: num(w, 'mem'),
        salt: buf(w, 'salt'),
        hash: buf(w, 'hash'),
        sealedKey: str(w, 'sealed'),
      };
      break;
  }
  const problem = boundsProblem(v);
  if (problem) throw new ImportedVerifierError(problem);
  return v;
}

/** A short label of the scheme and its strength, for reconciliation reports (no secret material). */
export function describeImported(v: ImportedVerifier): string {
  switch (v.kind) {
    case 'bcrypt':
      return `bcrypt cost=${v.cost}`;
    case 'pbkdf2':
      return `pbkdf2-${v.digest} i=${v.iterations}`;
    case 'scrypt':
      return `scrypt ln=${v.logN},r=${v.r},p=${v.p}`;
    case 'argon2':
      return `${v.type} m=${v.memoryKib},t=${v.iterations},p=${v.parallelism}`;
    case 'firebase-scrypt':
      return `firebase-scrypt rounds=${v.rounds},mem_cost=${v.memCost}`;
  }
}
