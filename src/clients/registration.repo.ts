// SQL for dynamic client registration (migration 0039): initial access tokens and the registration
// row of each registered client. Tokens are looked up by their SHA-256 digest; every statement
// filters on realm_id.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface InitialAccessTokenRow {
  realm_id: string;
  id: string;
  description: string | null;
  max_uses: number;
  uses: number;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const IAT_COLUMNS =
  'realm_id, id, description, max_uses, uses, expires_at, revoked_at, last_used_at, created_at';

export const insertInitialAccessToken = (
  tx: Tx,
  realmId: string,
  t: { id: string; digest: string; description: string | null; maxUses: number; expiresAt: Date | null },
  now: Date,
) =>
  maybeOne<InitialAccessTokenRow>(
    tx,
    `insert into initial_access_tokens (realm_id, id, token_digest, description, max_uses, expires_at, created_at)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${IAT_COLUMNS}`,
    [realmId, t.id, t.digest, t.description, t.maxUses, t.expiresAt, now],
  );

export const listInitialAccessTokens = (q: Queryable, realmId: string) =>
  many<InitialAccessTokenRow>(
    q,
    `select ${IAT_COLUMNS} from initial_access_tokens where realm_id = $1 order by id desc limit 200`,
    [realmId],
  );

/** Revokes a token once; null when there is no such token or it was revoked before. */
export const revokeInitialAccessToken = (tx: Tx, realmId: string, id: string, now: Date) =>
  maybeOne<InitialAccessTokenRow>(
    tx,
    `update initial_access_tokens set revoked_at = $3
      where realm_id = $1 and id = $2 and revoked_at is null returning ${IAT_COLUMNS}`,
    [realmId, id, now],
  );

export const findInitialAccessToken = (q: Queryable, realmId: string, id: string) =>
  maybeOne<InitialAccessTokenRow>(
    q,
    `select ${IAT_COLUMNS} from initial_access_tokens where realm_id = $1 and id = $2`,
    [realmId, id],
  );

/**
 * Spends one use of a live token (unrevoked, unexpired, uses left) in one statement, so concurrent
 * registrations never spend more than max_uses; null when the digest names no usable token.
 */
export const spendInitialAccessToken = (tx: Tx, realmId: string, digest: string, now: Date) =>
  maybeOne<InitialAccessTokenRow>(
    tx,
    `update initial_access_tokens set uses = uses + 1, last_used_at = $3
      where realm_id = $1 and token_digest = $2 and revoked_at is null and uses < max_uses
        and (expires_at is null or expires_at > $3)
      returning ${IAT_COLUMNS}`,
    [realmId, digest, now],
  );

export type RegistrationStatus = 'pending' | 'approved' | 'rejected' | 'deleted';

export interface RegistrationRow {
  realm_id: string;
  client_row_id: string;
  client_id: string;
  status: RegistrationStatus;
  initial_access_token_id: string | null;
  registration_token_digest: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
  decided_at: Date | null;
}

const REG_SELECT = `select r.realm_id, r.client_row_id, c.client_id, r.status, r.initial_access_token_id,
    r.registration_token_digest, r.metadata, r.created_at, r.decided_at
  from client_registrations r join clients c on c.realm_id = r.realm_id and c.id = r.client_row_id`;

export async function insertRegistration(
  tx: Tx,
  realmId: string,
  r: {
    clientRowId: string;
    status: RegistrationStatus;
    initialAccessTokenId: string | null;
    tokenDigest: string;
    metadata: Record<string, unknown>;
  },
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into client_registrations (realm_id, client_row_id, status, initial_access_token_id,
       registration_token_digest, token_rotated_at, metadata, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $6)`,
    [
      realmId,
      r.clientRowId,
      r.status,
      r.initialAccessTokenId,
      r.tokenDigest,
      now,
      JSON.stringify(r.metadata),
    ],
  );
}

/** The registration of a client by its public client_id, locked for a change. */
export const lockRegistration = (tx: Tx, realmId: string, clientId: string) =>
  maybeOne<RegistrationRow>(tx, `${REG_SELECT} where r.realm_id = $1 and c.client_id = $2 for update of r`, [
    realmId,
    clientId,
  ]);

export const findRegistration = (q: Queryable, realmId: string, clientId: string) =>
  maybeOne<RegistrationRow>(q, `${REG_SELECT} where r.realm_id = $1 and c.client_id = $2`, [
    realmId,
    clientId,
  ]);

/** A client's registration status; null for clients an administrator made (the enable rule). */
export async function registrationStatusOf(
  q: Queryable,
  realmId: string,
  clientRowId: string,
): Promise<RegistrationStatus | null> {
  const r = await maybeOne<{ status: RegistrationStatus }>(
    q,
    'select status from client_registrations where realm_id = $1 and client_row_id = $2',
    [realmId, clientRowId],
  );
  return r?.status ?? null;
}

/** One page of registrations, newest first, optionally of one status. */
export const listRegistrations = (
  q: Queryable,
  realmId: string,
  status: RegistrationStatus | null,
  limit: number,
) =>
  many<RegistrationRow>(
    q,
    `${REG_SELECT} where r.realm_id = $1 and ($2::text is null or r.status = $2)
      order by r.created_at desc, r.client_row_id limit $3`,
    [realmId, status, limit],
  );

/** Sets status, token digest (null ends the token) and metadata in one statement. */
export async function updateRegistration(
  tx: Tx,
  realmId: string,
  clientRowId: string,
  s: {
    status: RegistrationStatus;
    tokenDigest: string | null;
    metadata?: Record<string, unknown>;
    decided?: boolean;
  },
  now: Date,
): Promise<void> {
  await tx.query(
    `update client_registrations
        set status = $3, registration_token_digest = $4, token_rotated_at = $5,
            metadata = coalesce($6::jsonb, metadata),
            decided_at = case when $7 then $5 else decided_at end
      where realm_id = $1 and client_row_id = $2`,
    [
      realmId,
      clientRowId,
      s.status,
      s.tokenDigest,
      now,
      s.metadata === undefined ? null : JSON.stringify(s.metadata),
      s.decided === true,
    ],
  );
}
