// SQL for API keys (migration 0031): a service principal's long-lived automation credentials,
// kept as digests of their secret half.
import { many, maybeOne, one, type Queryable, type Tx } from '../platform/db/db.ts';

export interface ApiKeyRow {
  id: string;
  service_principal_id: string;
  name: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

/** What a presented key is checked against, with its principal's state. */
export interface ApiKeyVerifierRow extends ApiKeyRow {
  secret_digest: string;
  principal_state: string;
}

const COLUMNS = 'k.id, k.service_principal_id, k.name, k.created_at, k.expires_at, k.revoked_at';

export const findApiKey = (q: Queryable, realmId: string, id: string) =>
  maybeOne<ApiKeyRow>(q, `select ${COLUMNS} from api_keys k where k.realm_id = $1 and k.id = $2`, [
    realmId,
    id,
  ]);

export const lockApiKey = (tx: Tx, realmId: string, id: string) =>
  maybeOne<ApiKeyRow>(
    tx,
    `select ${COLUMNS} from api_keys k where k.realm_id = $1 and k.id = $2 for update`,
    [realmId, id],
  );

export const findApiKeyVerifier = (q: Queryable, realmId: string, id: string) =>
  maybeOne<ApiKeyVerifierRow>(
    q,
    `select ${COLUMNS}, k.secret_digest, p.state as principal_state
       from api_keys k join service_principals p on p.realm_id = k.realm_id and p.id = k.service_principal_id
      where k.realm_id = $1 and k.id = $2`,
    [realmId, id],
  );

/** Keys neither revoked nor expired at `now`. */
export const countLiveApiKeys = async (q: Queryable, realmId: string, principalId: string, now: Date) =>
  (
    await one<{ n: number }>(
      q,
      `select count(*)::int as n from api_keys
        where realm_id = $1 and service_principal_id = $2 and revoked_at is null and expires_at > $3`,
      [realmId, principalId, now],
    )
  ).n;

export const listApiKeys = (
  q: Queryable,
  realmId: string,
  f: { principalId?: string; state?: 'active' | 'revoked' | 'expired' },
  now: Date,
  page: { after: string | null; limit: number },
) =>
  many<ApiKeyRow>(
    q,
    `select ${COLUMNS} from api_keys k
      where k.realm_id = $1 and ($2::text is null or k.service_principal_id = $2)
        and ($3::text is null
          or ($3 = 'revoked' and k.revoked_at is not null)
          or ($3 = 'expired' and k.revoked_at is null and k.expires_at <= $4)
          or ($3 = 'active' and k.revoked_at is null and k.expires_at > $4))
        and ($5::text is null or k.id > $5)
      order by k.id limit $6`,
    [realmId, f.principalId ?? null, f.state ?? null, now, page.after, page.limit + 1],
  );

export const insertApiKey = (
  tx: Tx,
  realmId: string,
  k: { id: string; principalId: string; name: string; secretDigest: string; expiresAt: Date },
  now: Date,
) =>
  tx.query(
    `insert into api_keys (realm_id, id, service_principal_id, name, secret_digest, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [realmId, k.id, k.principalId, k.name, k.secretDigest, now, k.expiresAt],
  );

export const setApiKeyRevoked = (tx: Tx, realmId: string, id: string, now: Date) =>
  tx.query('update api_keys set revoked_at = $3 where realm_id = $1 and id = $2 and revoked_at is null', [
    realmId,
    id,
    now,
  ]);

/** Revokes every live key of a principal (its deletion); the ids revoked. */
export const revokeApiKeysOfPrincipal = async (tx: Tx, realmId: string, principalId: string, now: Date) =>
  (
    await many<{ id: string }>(
      tx,
      `update api_keys set revoked_at = $3
        where realm_id = $1 and service_principal_id = $2 and revoked_at is null returning id`,
      [realmId, principalId, now],
    )
  ).map((r) => r.id);
