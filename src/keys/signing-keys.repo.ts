import type { JWK } from 'jose';
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export type SigningKeyState = 'pending' | 'active' | 'retiring' | 'retired' | 'compromised';

export interface SigningKeyRow {
  realm_id: string;
  kid: string;
  algorithm: string;
  state: SigningKeyState;
  public_jwk: JWK;
  private_key_sealed: string;
  root_key_version: number;
  created_at: Date;
  activated_at: Date | null;
  retiring_at: Date | null;
  publish_until: Date | null;
  retired_at: Date | null;
  compromised_at: Date | null;
}

export async function insertSigningKey(
  tx: Tx,
  k: {
    realmId: string;
    kid: string;
    algorithm: string;
    state: SigningKeyState;
    publicJwk: JWK;
    sealed: string;
    rootKeyVersion: number;
  },
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into signing_keys (realm_id, kid, algorithm, state, public_jwk, private_key_sealed, root_key_version,
       created_at, activated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, case when $4 = 'active' then $8::timestamptz end)`,
    [k.realmId, k.kid, k.algorithm, k.state, JSON.stringify(k.publicJwk), k.sealed, k.rootKeyVersion, now],
  );
}

/** Keys a verifier may meet: pending (pre-published), active and retiring (spec doc 2). */
export async function listPublishedKeys(
  q: Queryable,
  realmName: string,
): Promise<{ realmFound: boolean; keys: JWK[] }> {
  const r = await q.query<{ realm_id: string; public_jwk: JWK | null }>(
    `select r.id as realm_id, k.public_jwk
       from realms r
       left join signing_keys k on k.realm_id = r.id and k.state in ('pending', 'active', 'retiring')
      where r.name = $1
      order by k.created_at desc nulls last`,
    [realmName],
  );
  return {
    realmFound: r.rows.length > 0,
    keys: r.rows.flatMap((row) => (row.public_jwk ? [row.public_jwk] : [])),
  };
}

export const findActiveKey = (q: Queryable, realmId: string) =>
  maybeOne<SigningKeyRow>(q, `select * from signing_keys where realm_id = $1 and state = 'active'`, [
    realmId,
  ]);

/** Every realm, with its active key when it has one (readiness and status checks). */
export const listRealmsWithActiveKey = async (q: Queryable) =>
  (
    await q.query<{
      realm_id: string;
      realm_state: string;
      kid: string | null;
      private_key_sealed: string | null;
    }>(
      `select r.id as realm_id, r.state as realm_state, k.kid, k.private_key_sealed
         from realms r left join signing_keys k on k.realm_id = r.id and k.state = 'active'`,
    )
  ).rows;

export const findSigningKey = (q: Queryable, realmId: string, kid: string) =>
  maybeOne<SigningKeyRow>(q, 'select * from signing_keys where realm_id = $1 and kid = $2', [realmId, kid]);

/** Every key of the realm, newest first (GET /signing-keys; a realm holds a handful a year). */
export const listSigningKeys = (q: Queryable, realmId: string) =>
  many<SigningKeyRow>(q, 'select * from signing_keys where realm_id = $1 order by created_at desc, kid', [
    realmId,
  ]);

/** The realm's one key in `state` (pending or active, each unique per realm), locked. */
export const lockKeyInState = (tx: Tx, realmId: string, state: 'pending' | 'active') =>
  maybeOne<SigningKeyRow>(tx, 'select * from signing_keys where realm_id = $1 and state = $2 for update', [
    realmId,
    state,
  ]);

export async function markCompromised(tx: Tx, realmId: string, kid: string, now: Date): Promise<void> {
  await tx.query(
    `update signing_keys set state = 'compromised', compromised_at = $3 where realm_id = $1 and kid = $2`,
    [realmId, kid, now],
  );
}

/** Retires a key at once, out of the key set (a pending key an emergency rotation supersedes). */
export async function retireNow(tx: Tx, realmId: string, kid: string, now: Date): Promise<void> {
  await tx.query(
    `update signing_keys set state = 'retired', retired_at = $3 where realm_id = $1 and kid = $2`,
    [realmId, kid, now],
  );
}

/** The token_revocations row of kind key that an emergency rotation leaves (migrations/0021). */
export async function insertKeyRevocation(
  tx: Tx,
  realmId: string,
  kid: string,
  expiresAt: Date,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into token_revocations (realm_id, jti, kind, reason, expires_at, created_at)
     values ($1, $2, 'key', 'key_compromised', $3, $4) on conflict (realm_id, jti) do nothing`,
    [realmId, kid, expiresAt, now],
  );
}
