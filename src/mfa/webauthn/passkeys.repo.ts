// Passkey rows: registered credentials, ceremonies in flight and the realm's trusted
// authenticator models (migrations/0020_passkeys.sql).
import { many, maybeOne, type Queryable, type Tx } from '../../platform/db/db.ts';

export interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: Uint8Array;
  sign_count: string;
  transports: string[];
  aaguid: string;
  backup_eligible: boolean;
  backup_state: boolean;
  user_verified: boolean;
  attestation_format: string;
  attestation_trusted: boolean;
  attestation_source: 'realm' | 'fido_metadata' | null;
  credential_protection: string | null;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

export type NewPasskey = Omit<PasskeyRow, 'sign_count' | 'last_used_at' | 'created_at'> & {
  signCount: number;
};

export async function insertPasskey(q: Tx, realmId: string, p: NewPasskey, now: Date): Promise<void> {
  await q.query(
    `insert into webauthn_credentials (realm_id, id, user_id, credential_id, public_key, sign_count,
       transports, aaguid, backup_eligible, backup_state, user_verified, attestation_format,
       attestation_trusted, attestation_source, credential_protection, name, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
    [
      realmId,
      p.id,
      p.user_id,
      p.credential_id,
      Buffer.from(p.public_key),
      p.signCount,
      p.transports,
      p.aaguid,
      p.backup_eligible,
      p.backup_state,
      p.user_verified,
      p.attestation_format,
      p.attestation_trusted,
      p.attestation_source,
      p.credential_protection,
      p.name,
      now,
    ],
  );
}

export const findPasskeyByCredentialId = (q: Queryable, realmId: string, credentialId: string) =>
  maybeOne<PasskeyRow>(q, 'select * from webauthn_credentials where realm_id = $1 and credential_id = $2', [
    realmId,
    credentialId,
  ]);

export const lockPasskey = (q: Tx, realmId: string, id: string) =>
  maybeOne<PasskeyRow>(q, 'select * from webauthn_credentials where realm_id = $1 and id = $2 for update', [
    realmId,
    id,
  ]);

export const listPasskeys = (q: Queryable, realmId: string, userId: string) =>
  many<PasskeyRow>(
    q,
    'select * from webauthn_credentials where realm_id = $1 and user_id = $2 order by created_at, id',
    [realmId, userId],
  );

/** The sign counter only moves forward; last use is recorded with it. */
export async function recordPasskeyUse(q: Tx, realmId: string, id: string, counter: number, now: Date) {
  await q.query(
    `update webauthn_credentials set sign_count = greatest(sign_count, $3), last_used_at = $4
      where realm_id = $1 and id = $2`,
    [realmId, id, counter, now],
  );
}

export async function renamePasskey(q: Tx, realmId: string, userId: string, id: string, name: string) {
  const r = await q.query(
    'update webauthn_credentials set name = $4 where realm_id = $1 and user_id = $2 and id = $3',
    [realmId, userId, id, name],
  );
  return (r.rowCount ?? 0) > 0;
}

export async function deletePasskey(q: Tx, realmId: string, userId: string, id: string) {
  const r = await q.query(
    'delete from webauthn_credentials where realm_id = $1 and user_id = $2 and id = $3',
    [realmId, userId, id],
  );
  return (r.rowCount ?? 0) > 0;
}

// ---- ceremonies ------------------------------------------------------------------------------

export type CeremonyKind = 'registration' | 'authentication';

export interface CeremonyRow<E = Record<string, unknown>> {
  id: string;
  kind: CeremonyKind;
  transaction_id: string | null;
  user_id: string | null;
  challenge: string;
  expected: E;
  expires_at: Date;
}

export interface NewCeremony {
  id: string;
  kind: CeremonyKind;
  transactionId: string | null;
  userId: string | null;
  challenge: string;
  expected: Record<string, unknown>;
  expiresAt: Date;
}

/** One live ceremony of a kind per owner: a new one replaces the last. */
export async function insertCeremony(q: Tx, realmId: string, c: NewCeremony, now: Date): Promise<void> {
  await q.query(
    `delete from webauthn_ceremonies where realm_id = $1 and kind = $2
        and transaction_id is not distinct from $3 and user_id is not distinct from $4`,
    [realmId, c.kind, c.transactionId, c.userId],
  );
  await q.query(
    `insert into webauthn_ceremonies (realm_id, id, kind, transaction_id, user_id, challenge, expected,
       expires_at, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      realmId,
      c.id,
      c.kind,
      c.transactionId,
      c.userId,
      c.challenge,
      JSON.stringify(c.expected),
      c.expiresAt,
      now,
    ],
  );
}

const OWNER = `realm_id = $1 and kind = $2 and transaction_id is not distinct from $3
  and user_id is not distinct from $4 and expires_at > $5`;

/** The owner's live ceremony, read without consuming it (checks run before the transaction). */
export const findCeremony = <E>(
  q: Queryable,
  realmId: string,
  kind: CeremonyKind,
  owner: { transactionId: string | null; userId: string | null },
  now: Date,
) =>
  maybeOne<CeremonyRow<E>>(q, `select * from webauthn_ceremonies where ${OWNER}`, [
    realmId,
    kind,
    owner.transactionId,
    owner.userId,
    now,
  ]);

/** Consumes the ceremony with this challenge: true for exactly one caller. */
export async function consumeCeremony(q: Tx, realmId: string, id: string): Promise<boolean> {
  const r = await q.query('delete from webauthn_ceremonies where realm_id = $1 and id = $2', [realmId, id]);
  return (r.rowCount ?? 0) > 0;
}

export async function deleteExpiredCeremonies(q: Queryable, now: Date): Promise<number> {
  const r = await q.query('delete from webauthn_ceremonies where expires_at <= $1', [now]);
  return r.rowCount ?? 0;
}

// ---- trusted authenticators --------------------------------------------------------------------

export interface TrustedAuthenticatorRow {
  id: string;
  aaguid: string;
  description: string;
  root_certificates: string[];
  created_at: Date;
}

export const listTrustedAuthenticators = (q: Queryable, realmId: string) =>
  many<TrustedAuthenticatorRow>(
    q,
    `select id, aaguid, description, root_certificates, created_at from webauthn_trusted_authenticators
      where realm_id = $1 order by created_at, id`,
    [realmId],
  );

export const findTrustedAuthenticator = (q: Queryable, realmId: string, aaguid: string) =>
  maybeOne<TrustedAuthenticatorRow>(
    q,
    `select id, aaguid, description, root_certificates, created_at from webauthn_trusted_authenticators
      where realm_id = $1 and aaguid = $2`,
    [realmId, aaguid],
  );

export async function countTrustedAuthenticators(q: Queryable, realmId: string): Promise<number> {
  const r = await q.query<{ n: number }>(
    'select count(*)::int as n from webauthn_trusted_authenticators where realm_id = $1',
    [realmId],
  );
  return r.rows[0]?.n ?? 0;
}

export async function insertTrustedAuthenticator(
  q: Tx,
  realmId: string,
  t: Omit<TrustedAuthenticatorRow, 'created_at'>,
  now: Date,
): Promise<TrustedAuthenticatorRow> {
  const r = await q.query<TrustedAuthenticatorRow>(
    `insert into webauthn_trusted_authenticators (realm_id, id, aaguid, description, root_certificates, created_at)
     values ($1, $2, $3, $4, $5, $6) returning id, aaguid, description, root_certificates, created_at`,
    [realmId, t.id, t.aaguid, t.description, t.root_certificates, now],
  );
  return r.rows[0] as TrustedAuthenticatorRow;
}

export async function deleteTrustedAuthenticator(q: Tx, realmId: string, id: string) {
  const r = await q.query<TrustedAuthenticatorRow>(
    `delete from webauthn_trusted_authenticators where realm_id = $1 and id = $2
      returning id, aaguid, description, root_certificates, created_at`,
    [realmId, id],
  );
  return r.rows[0] ?? null;
}

/** Serializes changes to one realm's trusted authenticator list. */
export async function lockRealmTrustList(q: Tx, realmId: string): Promise<void> {
  await q.query('select 1 from realms where id = $1 for update', [realmId]);
}
