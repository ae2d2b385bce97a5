// Helpers for tests about realms' signing keys: a clock tests move by hand, keys inserted in any
// state, and the removal of a realm a test broke on purpose (readiness looks at every realm).
import { SYSTEM_ACTOR } from '../../../src/audit/audit.types.ts';
import { generateKeyMaterial, type KeyMaterial } from '../../../src/keys/signing-key-material.ts';
import type { SigningKeyState } from '../../../src/keys/signing-keys.repo.ts';
import { storeSigningKey } from '../../../src/keys/signing-keys.service.ts';
import type { Clock } from '../../../src/platform/clock.ts';
import type { SigningAlgorithm } from '../../../src/platform/config/settings.ts';
import type { RootKeyring } from '../../../src/platform/crypto/keyring.ts';
import type { Db, Queryable } from '../../../src/platform/db/db.ts';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Members of a private JWK that a published key must never carry. */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

export class TestClock implements Clock {
  #ms: number;
  constructor(start: Date | number = Date.now()) {
    this.#ms = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): Date {
    this.#ms += ms;
    return this.now();
  }
  set(at: Date | number): Date {
    this.#ms = typeof at === 'number' ? at : at.getTime();
    return this.now();
  }
}

/** Stores a freshly generated key in the given state, as the services do; returns its material. */
export async function insertKey(
  db: Db,
  keyring: RootKeyring,
  realmId: string,
  state: SigningKeyState,
  now: Date,
  algorithm: SigningAlgorithm = 'RS256',
): Promise<KeyMaterial> {
  const material = await generateKeyMaterial(algorithm);
  await db.tx((tx) => storeSigningKey(tx, keyring, realmId, material, state, SYSTEM_ACTOR, now));
  return material;
}

export interface KeyRowView {
  kid: string;
  state: SigningKeyState;
  algorithm: string;
  root_key_version: number;
  private_key_sealed: string;
  created_at: Date;
  activated_at: Date | null;
  retiring_at: Date | null;
  publish_until: Date | null;
  retired_at: Date | null;
}

export async function keysOf(q: Queryable, realmId: string): Promise<KeyRowView[]> {
  const r = await q.query<KeyRowView>(
    `select kid, state, algorithm, root_key_version, private_key_sealed, created_at, activated_at, retiring_at,
            publish_until, retired_at
       from signing_keys where realm_id = $1 order by created_at, kid`,
    [realmId],
  );
  return r.rows.map((k) => ({ ...k, root_key_version: Number(k.root_key_version) }));
}

export const keysIn = async (q: Queryable, realmId: string, state: SigningKeyState) =>
  (await keysOf(q, realmId)).filter((k) => k.state === state);

/** Deletes a realm and everything this release stores for it. */
export async function removeRealm(db: Db, realmId: string): Promise<void> {
  await db.tx(async (tx) => {
    for (const table of [
      'role_assignments',
      'password_credentials',
      'user_identifiers',
      'users',
      'roles',
      'clients',
      'signing_keys',
      'realm_policy_revisions',
      'outbox',
      'audit_events',
    ]) {
      await tx.query(`delete from ${table} where realm_id = $1`, [realmId]);
    }
    await tx.query('delete from realms where id = $1', [realmId]);
  });
}

export const ms = (d: Date | string | null): number | null => (d === null ? null : new Date(d).getTime());
