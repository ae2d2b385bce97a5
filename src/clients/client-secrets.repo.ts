// SQL for client secrets (migration 0004). Rows hold verifiers, never secrets.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface ClientSecretRow {
  realm_id: string;
  id: string;
  client_row_id: string;
  verifier: string;
  key_version: number;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export interface NewClientSecret {
  id: string;
  clientRowId: string;
  verifier: string;
  keyVersion: number;
  expiresAt: Date | null;
}

const ACTIVE = '(revoked_at is null and (expires_at is null or expires_at > $3))';

/** The client row, locked so issuing and revoking its secrets run one at a time. */
export const lockClientForSecrets = (tx: Tx, realmId: string, clientRowId: string) =>
  maybeOne<{ id: string; client_id: string; token_endpoint_auth_method: string }>(
    tx,
    'select id, client_id, token_endpoint_auth_method from clients where realm_id = $1 and id = $2 for update',
    [realmId, clientRowId],
  );

export async function countActiveSecrets(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  now: Date,
): Promise<number> {
  const r = await q.query<{ n: number | string }>(
    `select count(*) as n from client_secrets where realm_id = $1 and client_row_id = $2 and ${ACTIVE}`,
    [realmId, clientRowId, now],
  );
  return Number(r.rows[0]?.n ?? 0);
}

export const findActiveSecrets = (q: Queryable, realmId: string, clientRowId: string, now: Date) =>
  many<ClientSecretRow>(
    q,
    `select * from client_secrets where realm_id = $1 and client_row_id = $2 and ${ACTIVE}
     order by created_at, id`,
    [realmId, clientRowId, now],
  );

/** Active secrets of several clients at once (a page of the client list), oldest first. */
export const findActiveSecretsOfClients = (
  q: Queryable,
  realmId: string,
  clientRowIds: readonly string[],
  now: Date,
) =>
  many<ClientSecretRow>(
    q,
    `select * from client_secrets where realm_id = $1 and client_row_id = any($2) and ${ACTIVE}
     order by created_at, id`,
    [realmId, clientRowIds, now],
  );

export async function insertClientSecret(
  tx: Tx,
  realmId: string,
  s: NewClientSecret,
  now: Date,
): Promise<ClientSecretRow> {
  const r = await tx.query<ClientSecretRow>(
    `insert into client_secrets (realm_id, id, client_row_id, verifier, key_version, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7) returning *`,
    [realmId, s.id, s.clientRowId, s.verifier, s.keyVersion, now, s.expiresAt],
  );
  return r.rows[0] as ClientSecretRow;
}

export const findClientSecret = (q: Queryable, realmId: string, clientRowId: string, secretId: string) =>
  maybeOne<ClientSecretRow>(
    q,
    'select * from client_secrets where realm_id = $1 and client_row_id = $2 and id = $3',
    [realmId, clientRowId, secretId],
  );

/** Sets revoked_at once; null when the secret is unknown or was already revoked. */
export const updateSecretRevoked = (
  tx: Tx,
  realmId: string,
  clientRowId: string,
  secretId: string,
  now: Date,
) =>
  maybeOne<ClientSecretRow>(
    tx,
    `update client_secrets set revoked_at = $4
     where realm_id = $1 and client_row_id = $2 and id = $3 and revoked_at is null returning *`,
    [realmId, clientRowId, secretId, now],
  );

/**
 * Records a successful use at most once per `resolutionMs`: a write per token request would put
 * a hot-row UPDATE on every client_credentials call (bench/README.md).
 */
export async function touchSecretUsed(
  q: Queryable,
  realmId: string,
  secretId: string,
  now: Date,
  resolutionMs: number,
): Promise<void> {
  await q.query(
    `update client_secrets set last_used_at = $3
     where realm_id = $1 and id = $2 and (last_used_at is null or last_used_at <= $4)`,
    [realmId, secretId, now, new Date(now.getTime() - resolutionMs)],
  );
}
