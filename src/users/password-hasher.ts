// Password verifiers: Argon2id off the event loop (@node-rs/argon2 runs on libuv threads), with an
// optional versioned pepper applied as HMAC before hashing (spec doc 2, Authentication 6). Verifiers
// imported from other systems (users/imported-verifier.ts) verify in their own format until the
// account's first sign-in replaces them with the realm's Argon2id.
import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { PepperRing, RootKeyring } from '../platform/crypto/keyring.ts';
import { Semaphore } from '../platform/semaphore.ts';
import { decodeImported, ImportedVerifierError, isImported } from './imported-verifier.ts';
import { verifyImported } from './imported-verifier-verify.ts';

// The package exports Algorithm as a const enum, which isolated-module builds cannot read.
const ARGON2ID = 2;

/** Binding of the sealed Firebase signer keys: the same in every row, so history rows still open. */
const FIREBASE_KEY_AAD = 'password-parameters/firebase-scrypt';

/** Seals a Firebase project's signer key and salt separator for an imported verifier. */
export const sealFirebaseKey = (keyring: RootKeyring, secret: Buffer): string =>
  keyring.encrypt('password-parameters', secret, FIREBASE_KEY_AAD);

export interface PasswordHashSettings {
  argonMemoryKib: number;
  argonIterations: number;
  argonParallelism: number;
  maxConcurrentHashes: number;
}

export interface PasswordVerifier {
  hash: string;
  pepperVersion: number | null;
}

export class PasswordHasher {
  private readonly gate: Semaphore;
  private readonly settings: PasswordHashSettings;
  private readonly pepper: PepperRing;
  private readonly keyring: RootKeyring | null;

  constructor(settings: PasswordHashSettings, pepper: PepperRing, keyring: RootKeyring | null = null) {
    this.settings = settings;
    this.pepper = pepper;
    this.keyring = keyring;
    this.gate = new Semaphore(settings.maxConcurrentHashes);
  }

  async hash(password: string): Promise<PasswordVerifier> {
    const version = this.pepper.activeVersion;
    const input = this.peppered(password, version);
    const phc = await this.gate.run(() =>
      hash(input, {
        algorithm: ARGON2ID,
        memoryCost: this.settings.argonMemoryKib,
        timeCost: this.settings.argonIterations,
        parallelism: this.settings.argonParallelism,
      }),
    );
    return { hash: phc, pepperVersion: version };
  }

  /** A verifier made under another pepper version than the active one (spec doc 2, Authentication 6). */
  needsRepepper(stored: PasswordVerifier): boolean {
    return stored.pepperVersion !== this.pepper.activeVersion;
  }

  /**
   * Replaced by the realm's Argon2id at the next successful sign-in: an imported verifier, or one
   * made under another pepper version.
   */
  needsRehash(stored: PasswordVerifier): boolean {
    return isImported(stored.hash) || this.needsRepepper(stored);
  }

  private dummy: Promise<PasswordVerifier> | null = null;

  /**
   * Verifies against the stored verifier, or against a throwaway one when there is none, so an
   * unknown account costs the same hash as a known one (no enumeration through timing).
   */
  async verifyOrBurn(password: string, stored: PasswordVerifier | null): Promise<boolean> {
    if (stored) return this.verify(password, stored);
    this.dummy ??= this.hash(randomBytes(16).toString('base64url'));
    await this.verify(password, await this.dummy);
    return false;
  }

  async verify(password: string, stored: PasswordVerifier): Promise<boolean> {
    if (isImported(stored.hash)) return this.verifyImported(password, stored.hash);
    const input = this.peppered(password, stored.pepperVersion);
    return this.gate.run(() => verify(stored.hash, input));
  }

  private async verifyImported(password: string, stored: string): Promise<boolean> {
    let v: ReturnType<typeof decodeImported>;
    try {
      v = decodeImported(stored);
    } catch (e) {
      // A stored verifier this release cannot read (changed by hand) never signs anyone in.
      if (e instanceof ImportedVerifierError) return false;
      throw e;
    }
    return this.gate.run(() => verifyImported(password, v, (sealed) => this.openFirebaseKey(sealed)));
  }

  /** The signer key and salt separator of a sealed Firebase parameter set. */
  openFirebaseKey(sealed: string): { signerKey: Buffer; saltSeparator: Buffer } {
    if (!this.keyring) throw new Error('verifying Firebase verifiers needs a root key');
    const o = JSON.parse(
      this.keyring.decrypt('password-parameters', sealed, FIREBASE_KEY_AAD).toString(),
    ) as {
      k: string;
      s: string;
    };
    return { signerKey: Buffer.from(o.k, 'base64'), saltSeparator: Buffer.from(o.s, 'base64') };
  }

  // The argon2 binding reads a password as UTF-8 and refuses other bytes when verifying, so the
  // raw HMAC digest is fed to it as base64 text.
  private peppered(password: string, version: number | null): string {
    return version === null ? password : this.pepper.apply(password, version).toString('base64');
  }
}
