// Password verifiers: Argon2id off the event loop (@node-rs/argon2 runs on libuv threads), with an
// optional versioned pepper applied as HMAC before hashing (spec doc 2, Authentication 6).
import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { PepperRing } from '../platform/crypto/keyring.ts';
import { Semaphore } from '../platform/semaphore.ts';

// The package exports Algorithm as a const enum, which isolated-module builds cannot read.
const ARGON2ID = 2;

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

  constructor(settings: PasswordHashSettings, pepper: PepperRing) {
    this.settings = settings;
    this.pepper = pepper;
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
    const input = this.peppered(password, stored.pepperVersion);
    return this.gate.run(() => verify(stored.hash, input));
  }

  // The argon2 binding reads a password as UTF-8 and refuses other bytes when verifying, so the
  // raw HMAC digest is fed to it as base64 text.
  private peppered(password: string, version: number | null): string {
    return version === null ? password : this.pepper.apply(password, version).toString('base64');
  }
}
