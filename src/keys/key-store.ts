// Per-process view of the realms' signing keys. The published key set is cached for 5 seconds
// (spec doc 2, Signing key states); unsealed private keys are cached by kid because a kid's key
// never changes. Whether a key may still be used is always read from the database.
import type { KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { Clock } from '../platform/clock.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { privateKeyFromPkcs8, sealContext } from './signing-key-material.ts';
import { findActiveKey, listPublishedKeys, listRealmsWithActiveKey } from './signing-keys.repo.ts';

export const KEY_SET_CACHE_MS = 5000;

export interface Signer {
  kid: string;
  algorithm: string;
  key: KeyObject;
}

export interface SigningHealth {
  /** Active realms without a usable active key: readiness fails. */
  activeRealmsMissing: number;
  /** Any realm, suspended ones included, without a usable active key: status says unavailable. */
  realmsMissing: number;
}

export class KeyStore {
  private readonly keySets = new Map<string, { until: number; body: { keys: JWK[] } | null }>();
  private readonly unsealed = new Map<string, KeyObject>();
  private readonly kidsByRealm = new Map<string, string[]>();

  private readonly db: Db;
  private readonly keyring: RootKeyring | null;
  private readonly clock: Clock;

  constructor(db: Db, keyring: RootKeyring | null, clock: Clock) {
    this.db = db;
    this.keyring = keyring;
    this.clock = clock;
  }

  /** The public key set of a realm by name; null when there is no such realm. */
  async publishedKeySet(realmName: string): Promise<{ keys: JWK[] } | null> {
    const now = this.clock.now().getTime();
    const cached = this.keySets.get(realmName);
    if (cached && cached.until > now) return cached.body;
    const { realmFound, keys } = await listPublishedKeys(this.db, realmName);
    const body = realmFound ? { keys } : null;
    if (this.keySets.size > 10_000) this.keySets.clear(); // bounded: realm names come from URLs
    this.keySets.set(realmName, { until: now + KEY_SET_CACHE_MS, body });
    return body;
  }

  /** The realm's active signer, or null when it has none that this process can unseal. */
  async activeSigner(realmId: string, q: Queryable = this.db): Promise<Signer | null> {
    return this.signerFrom(realmId, await findActiveKey(q, realmId));
  }

  /**
   * Drops this process's cached key set of a realm, so a key that just left it (an emergency
   * rotation) stops verifying here at once; other processes follow within KEY_SET_CACHE_MS.
   */
  forgetKeySet(realmName: string): void {
    this.keySets.delete(realmName);
  }

  /** Why a realm has no signer (service_signing_failures_total): no active key, or one this process cannot unseal. */
  async missingSignerReason(realmId: string): Promise<'no_active_key' | 'key_unavailable'> {
    return (await findActiveKey(this.db, realmId)) ? 'key_unavailable' : 'no_active_key';
  }

  /** Kids of the realm this process holds unsealed: a statement need not read their sealed keys. */
  unsealedKids(realmId: string): string[] {
    return this.kidsByRealm.get(realmId) ?? [];
  }

  /**
   * The signer of an active key row a caller read itself (in a statement it runs anyway); a row
   * without its sealed key (null) is usable when this process holds that kid unsealed.
   */
  signerFrom(
    realmId: string,
    row: { kid: string; algorithm: string; private_key_sealed: string | null } | null,
  ): Signer | null {
    if (!row) return null;
    const key = this.unseal(realmId, row.kid, row.private_key_sealed);
    return key ? { kid: row.kid, algorithm: row.algorithm, key } : null;
  }

  async signingHealth(): Promise<SigningHealth> {
    const rows = await listRealmsWithActiveKey(this.db);
    let activeRealmsMissing = 0;
    let realmsMissing = 0;
    for (const r of rows) {
      const usable =
        r.kid !== null &&
        r.private_key_sealed !== null &&
        this.unseal(r.realm_id, r.kid, r.private_key_sealed);
      if (usable) continue;
      realmsMissing++;
      if (r.realm_state === 'active') activeRealmsMissing++;
    }
    return { activeRealmsMissing, realmsMissing };
  }

  private unseal(realmId: string, kid: string, sealed: string | null): KeyObject | null {
    const cacheKey = `${realmId}/${kid}`;
    const hit = this.unsealed.get(cacheKey);
    if (hit) return hit;
    if (!this.keyring || sealed === null) return null;
    try {
      const pem = this.keyring.decrypt('signing-key', sealed, sealContext(realmId, kid)).toString('utf8');
      const key = privateKeyFromPkcs8(pem);
      this.unsealed.set(cacheKey, key);
      this.kidsByRealm.set(realmId, [...(this.kidsByRealm.get(realmId) ?? []), kid]);
      return key;
    } catch {
      // A missing root-key version or a damaged row: the key is unusable, which readiness reports.
      return null;
    }
  }
}
