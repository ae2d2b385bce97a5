// The root-key hierarchy (ARCHITECTURE "Storage"; spec doc 2, Authentication 6 and Key custody
// 2-3): secrets at rest are sealed with AES-256-GCM under a key derived by HKDF-SHA-256 from the
// versioned root key, one label per purpose. Old versions keep decrypting; only the active one seals.

import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import type { Config } from '../config/settings.ts';
import { resolveKey32, type SecretRefContext } from './secret-ref.ts';

export type KeyPurpose =
  | 'signing-key'
  | 'totp-seed'
  | 'webhook-secret'
  | 'hook-secret'
  | 'provider-secret'
  | 'upstream-token'
  | 'job-result'
  | 'mail-secret'
  | 'password-parameters'
  | 'user-import'
  | 'provisioning-credential';

/** Purposes of keyed digests (verifiers), each with its own HKDF label apart from the sealing keys. */
export type MacPurpose = 'client-secret' | 'dpop-nonce';

export class KeyringError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyringError';
  }
}

const SEALED_PREFIX = 'pa1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// A fixed salt keeps derivations reproducible from the root key alone (RFC 5869 allows it).
const SALT = Buffer.from('proudauth/keyring', 'utf8');

function derive(key: Buffer, label: string, bytes: number): Buffer {
  return Buffer.from(hkdfSync('sha256', key, SALT, Buffer.from(label, 'utf8'), bytes));
}

// Doctor prints these, so they come from their own HKDF label: they identify a key without
// revealing anything usable about it or about the keys derived for sealing.
function fingerprintOf(key: Buffer, label: string): string {
  return derive(key, label, 8).toString('hex');
}

function checkVersions(keys: Map<number, Buffer>, kind: string): void {
  for (const [version, key] of keys) {
    if (!Number.isSafeInteger(version) || version < 1)
      throw new KeyringError(`${kind} version ${version} is invalid`);
    if (key.length !== 32) throw new KeyringError(`${kind} version ${version} must be 32 bytes`);
  }
}

export class RootKeyring {
  readonly activeVersion: number;
  readonly #keys: Map<number, Buffer>;
  readonly #derived = new Map<string, Buffer>();
  readonly #macKeys = new Map<string, KeyObject>();

  private constructor(keys: Map<number, Buffer>, activeVersion: number) {
    this.#keys = keys;
    this.activeVersion = activeVersion;
  }

  static fromKeys(keys: Map<number, Buffer>, activeVersion: number): RootKeyring {
    checkVersions(keys, 'root key');
    if (!keys.has(activeVersion))
      throw new KeyringError(`active root key version ${activeVersion} is not loaded`);
    return new RootKeyring(new Map(keys), activeVersion);
  }

  versions(): number[] {
    return [...this.#keys.keys()].sort((a, b) => a - b);
  }

  fingerprints(): { version: number; fingerprint: string }[] {
    return this.versions().map((version) => ({
      version,
      fingerprint: fingerprintOf(this.#keys.get(version)!, 'proudauth/v1/root-fingerprint'),
    }));
  }

  /** Seals under the active version; `aad` names the row the value belongs to (e.g. `realmId/kid`). */
  encrypt(purpose: KeyPurpose, plaintext: Buffer | string, aad: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keyFor(this.activeVersion, purpose), iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const data = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
    const body = Buffer.concat([cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}.${this.activeVersion}.${iv.toString('base64url')}.${body.toString('base64url')}`;
  }

  decrypt(purpose: KeyPurpose, sealed: string, aad: string): Buffer {
    const parts = sealed.split('.');
    const [prefix, versionText = '', ivText = '', bodyText = ''] = parts;
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (parts.length !== 4 || prefix !== SEALED_PREFIX || !/^[1-9]\d*$/.test(versionText)) {
      throw new KeyringError('sealed value is malformed');
    }
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES)
      throw new KeyringError('sealed value is malformed');
    const version = Number(versionText);
    if (!this.#keys.has(version)) {
      throw new KeyringError(`sealed value needs root key version ${version}, which is not configured`);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#keyFor(version, purpose), iv);
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new KeyringError(
        'sealed value failed authentication (wrong key, purpose or row binding, or tampered)',
      );
    }
  }

  /**
   * The HMAC key for `purpose` under a root key version (the active one by default). A verifier
   * records the version it was made with, so it still verifies after a new version becomes active.
   */
  macKey(purpose: MacPurpose, version: number = this.activeVersion): KeyObject {
    const id = `${version}/${purpose}`;
    let key = this.#macKeys.get(id);
    if (!key) {
      const root = this.#keys.get(version);
      if (!root) throw new KeyringError(`root key version ${version} is not configured`);
      key = createSecretKey(derive(root, `proudauth/v1/mac/${purpose}`, 32));
      this.#macKeys.set(id, key);
    }
    return key;
  }

  #keyFor(version: number, purpose: KeyPurpose): Buffer {
    const id = `${version}/${purpose}`;
    let key = this.#derived.get(id);
    if (!key) {
      key = derive(this.#keys.get(version)!, `proudauth/v1/seal/${purpose}`, 32);
      this.#derived.set(id, key);
    }
    return key;
  }
}

/** Optional, versioned password pepper (spec doc 2, Authentication 6 and Key custody 3). */
export class PepperRing {
  readonly activeVersion: number | null;
  readonly #keys: Map<number, Buffer>;

  private constructor(keys: Map<number, Buffer>, activeVersion: number | null) {
    this.#keys = keys;
    this.activeVersion = activeVersion;
  }

  static fromKeys(keys: Map<number, Buffer>, activeVersion: number | null): PepperRing {
    checkVersions(keys, 'pepper');
    if (activeVersion === null && keys.size > 0)
      throw new KeyringError('pepper keys are loaded but none is active');
    if (activeVersion !== null && !keys.has(activeVersion)) {
      throw new KeyringError(`active pepper version ${activeVersion} is not loaded`);
    }
    return new PepperRing(new Map(keys), activeVersion);
  }

  versions(): number[] {
    return [...this.#keys.keys()].sort((a, b) => a - b);
  }

  /** HMAC-SHA-256 of the password under the given pepper version, fed to the password hash. */
  apply(password: string, version: number): Buffer {
    const key = this.#keys.get(version);
    if (!key) throw new KeyringError(`pepper version ${version} is not configured`);
    return createHmac('sha256', key).update(password, 'utf8').digest();
  }

  fingerprints(): { version: number; fingerprint: string }[] {
    return this.versions().map((version) => ({
      version,
      fingerprint: fingerprintOf(this.#keys.get(version)!, 'proudauth/v1/pepper-fingerprint'),
    }));
  }
}

/** A new random root key for `identity-cli generate-root-key`. */
export function generateRootKey(): string {
  return randomBytes(32).toString('base64');
}

export interface Keyrings {
  root: RootKeyring | null;
  pepper: PepperRing;
  keyProvider: 'kms_unwrapped' | 'software';
}

/** Resolves every configured key reference; any failure throws so start-up stops. */
export async function loadKeyrings(config: Config, env: NodeJS.ProcessEnv): Promise<Keyrings> {
  const load = async (refs: Record<string, string>, setting: string) => {
    const entries = await Promise.all(
      Object.entries(refs).map(async ([version, ref]): Promise<[number, Buffer]> => {
        const ctx: SecretRefContext = {
          env,
          environment: config.environment,
          kms: config.keys.kms,
          what: `${setting}.${version}`,
        };
        return [Number(version), await resolveKey32(ref, ctx)];
      }),
    );
    return new Map(entries);
  };
  const rootKeys = await load(config.keys.root, 'keys.root');
  const pepperKeys = await load(config.keys.pepper, 'keys.pepper');
  let root: RootKeyring | null = null;
  if (rootKeys.size > 0) {
    if (config.keys.activeVersion === null) throw new KeyringError('keys.active_version is not set');
    root = RootKeyring.fromKeys(rootKeys, config.keys.activeVersion);
  }
  return {
    root,
    pepper: PepperRing.fromKeys(pepperKeys, config.keys.pepperActiveVersion),
    keyProvider: config.keys.kms.command ? 'kms_unwrapped' : 'software',
  };
}
