// Verifying a password against an imported verifier (users/imported-verifier.ts). Each scheme
// recomputes the key from the password with a maintained implementation, off the event loop
// (node:crypto's pbkdf2 and scrypt, @node-rs/argon2 and @node-rs/bcrypt run on libuv's threads),
// and the final comparison is ours and constant-time (timingSafeEqual over equal lengths; a length
// mismatch is a property of the stored verifier, not of the password).
import { createCipheriv, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { hashRaw } from '@node-rs/argon2';
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { type ImportedVerifier, SCRYPT_MAX_MEMORY } from './imported-verifier.ts';
import { bcryptBase64 } from './imported-verifier-parse.ts';

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (
  password: Buffer,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

// The package exports Algorithm and Version as const enums, which isolated-module builds cannot read.
const ARGON2_ALGORITHM = { argon2d: 0, argon2i: 1, argon2id: 2 } as const;
const ARGON2_VERSION = { 16: 0, 19: 1 } as const;

const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/** Opens the sealed signer key and salt separator of a Firebase verifier. */
export type UnsealFirebaseKey = (sealed: string) => { signerKey: Buffer; saltSeparator: Buffer };

/** The key or digest the verifier would hold for `password`, in the verifier's own length. */
export async function recompute(
  password: Buffer,
  v: ImportedVerifier,
  unseal: UnsealFirebaseKey,
): Promise<Buffer> {
  switch (v.kind) {
    case 'bcrypt': {
      // The binding writes the $2b$ form; $2a$ and $2y$ compute the same digest for passwords
      // below 256 bytes (the sign-in step accepts at most 1024, bcrypt reads the first 72).
      const text = await bcryptHash(password, v.cost, v.salt);
      return (bcryptBase64(text.slice(-31)) as Buffer).subarray(0, 23);
    }
    case 'pbkdf2':
      return pbkdf2Async(password, v.salt, v.iterations, v.key.length, v.digest);
    case 'scrypt':
      return scryptAsync(password, v.salt, v.key.length, {
        N: 2 ** v.logN,
        r: v.r,
        p: v.p,
        maxmem: SCRYPT_MAX_MEMORY + 1024 * 1024,
      });
    case 'argon2':
      return hashRaw(password, {
        algorithm: ARGON2_ALGORITHM[v.type],
        version: ARGON2_VERSION[v.version],
        memoryCost: v.memoryKib,
        timeCost: v.iterations,
        parallelism: v.parallelism,
        outputLen: v.key.length,
        salt: v.salt,
      });
    case 'firebase-scrypt': {
      // github.com/firebase/scrypt, scryptenc_buf_saltlen: scrypt over salt || separator with
      // N = 2^mem_cost, r = rounds, p = 1 and a 64-byte key; AES-256-CTR under the key's first 32
      // bytes (counter block of zeros) encrypts the project's signer key; the result is the hash.
      const { signerKey, saltSeparator } = unseal(v.sealedKey);
      const dk = await scryptAsync(password, Buffer.concat([v.salt, saltSeparator]), 64, {
        N: 2 ** v.memCost,
        r: v.rounds,
        p: 1,
        maxmem: SCRYPT_MAX_MEMORY + 1024 * 1024,
      });
      const aes = createCipheriv('aes-256-ctr', dk.subarray(0, 32), Buffer.alloc(16));
      return Buffer.concat([aes.update(signerKey), aes.final()]);
    }
  }
}

const storedBytes = (v: ImportedVerifier): Buffer =>
  v.kind === 'bcrypt' ? v.digest : v.kind === 'firebase-scrypt' ? v.hash : v.key;

export async function verifyImported(
  password: string,
  v: ImportedVerifier,
  unseal: UnsealFirebaseKey,
): Promise<boolean> {
  return sameBytes(await recompute(Buffer.from(password, 'utf8'), v, unseal), storedBytes(v));
}
