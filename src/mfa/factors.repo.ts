// Pending factor enrollments from /me, HOTP tokens and what an account has enrolled. Seeds are
// sealed under the root key (purpose totp-seed) and bound to the row they belong to.
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import { maybeOne, one, type Queryable, type Tx } from '../platform/db/db.ts';

export type EnrollmentKind = 'totp' | 'hotp';

export const enrollmentSeedContext = (realmId: string, id: string) => `factor-enrollment/${realmId}/${id}`;
export const hotpSeedContext = (realmId: string, userId: string) => `hotp/${realmId}/${userId}`;

export interface EnrollmentRow {
  id: string;
  secret_sealed: string;
  expires_at: Date;
}

export async function insertEnrollment(
  q: Tx,
  e: {
    realmId: string;
    id: string;
    userId: string;
    kind: EnrollmentKind;
    sealed: string;
    expiresAt: Date;
    now: Date;
  },
): Promise<void> {
  // One pending enrollment of a kind per account: a new one replaces the last.
  await q.query('delete from factor_enrollments where realm_id = $1 and user_id = $2 and kind = $3', [
    e.realmId,
    e.userId,
    e.kind,
  ]);
  await q.query(
    `insert into factor_enrollments (realm_id, id, user_id, kind, secret_sealed, expires_at, created_at)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [e.realmId, e.id, e.userId, e.kind, e.sealed, e.expiresAt, e.now],
  );
}

/** The account's live pending enrollment of a kind, locked. */
export function lockEnrollment(q: Tx, realmId: string, userId: string, kind: EnrollmentKind, now: Date) {
  return maybeOne<EnrollmentRow>(
    q,
    `select id, secret_sealed, expires_at from factor_enrollments
      where realm_id = $1 and user_id = $2 and kind = $3 and expires_at > $4 for update`,
    [realmId, userId, kind, now],
  );
}

export async function deleteEnrollment(q: Tx, realmId: string, id: string): Promise<void> {
  await q.query('delete from factor_enrollments where realm_id = $1 and id = $2', [realmId, id]);
}

export interface HotpRow {
  id: string;
  secret_sealed: string;
  counter: string;
  resync_window_start: Date | null;
  resync_attempts: number;
}

export function lockHotp(q: Tx, realmId: string, userId: string) {
  return maybeOne<HotpRow>(
    q,
    `select id, secret_sealed, counter, resync_window_start, resync_attempts from hotp_credentials
      where realm_id = $1 and user_id = $2 for update`,
    [realmId, userId],
  );
}

/** Stores (or replaces: one per account) the account's HOTP token. */
export async function storeHotp(
  q: Tx,
  keyring: RootKeyring,
  h: { realmId: string; userId: string; id: string; secret: Buffer; counter: number; now: Date },
): Promise<void> {
  const sealed = keyring.encrypt('totp-seed', h.secret, hotpSeedContext(h.realmId, h.userId));
  await q.query(
    `insert into hotp_credentials (realm_id, user_id, id, secret_sealed, counter, created_at)
     values ($1, $2, $3, $4, $5, $6)
     on conflict (realm_id, user_id) do update set id = excluded.id, secret_sealed = excluded.secret_sealed,
       counter = excluded.counter, resync_window_start = null, resync_attempts = 0, created_at = excluded.created_at`,
    [h.realmId, h.userId, h.id, sealed, h.counter, h.now],
  );
}

/** Moves the counter forward only. */
export async function advanceHotp(
  q: Tx,
  realmId: string,
  userId: string,
  nextCounter: number,
): Promise<void> {
  await q.query(
    'update hotp_credentials set counter = greatest(counter, $3) where realm_id = $1 and user_id = $2',
    [realmId, userId, nextCounter],
  );
}

export async function recordResyncAttempt(
  q: Tx,
  realmId: string,
  userId: string,
  windowStart: Date,
  attempts: number,
): Promise<void> {
  await q.query(
    'update hotp_credentials set resync_window_start = $3, resync_attempts = $4 where realm_id = $1 and user_id = $2',
    [realmId, userId, windowStart, attempts],
  );
}

export async function deleteTotp(q: Tx, realmId: string, userId: string): Promise<boolean> {
  const r = await q.query('delete from totp_credentials where realm_id = $1 and user_id = $2', [
    realmId,
    userId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

export async function deleteHotp(q: Tx, realmId: string, userId: string): Promise<boolean> {
  const r = await q.query('delete from hotp_credentials where realm_id = $1 and user_id = $2', [
    realmId,
    userId,
  ]);
  return (r.rowCount ?? 0) > 0;
}

export interface EnrolledFactors {
  totp: boolean;
  hotp: boolean;
  /** At least one passkey. */
  webauthn: boolean;
  recoveryCodes: boolean;
}

export async function enrolledFactors(
  q: Queryable,
  realmId: string,
  userId: string,
): Promise<EnrolledFactors> {
  const r = await q.query<{ totp: boolean; hotp: boolean; webauthn: boolean; codes: boolean }>(
    `select exists (select 1 from totp_credentials where realm_id = $1 and user_id = $2) as totp,
            exists (select 1 from hotp_credentials where realm_id = $1 and user_id = $2) as hotp,
            exists (select 1 from webauthn_credentials where realm_id = $1 and user_id = $2) as webauthn,
            exists (select 1 from recovery_codes where realm_id = $1 and user_id = $2 and used_at is null) as codes`,
    [realmId, userId],
  );
  const row = r.rows[0];
  return {
    totp: row?.totp ?? false,
    hotp: row?.hotp ?? false,
    webauthn: row?.webauthn ?? false,
    recoveryCodes: row?.codes ?? false,
  };
}

/**
 * Takes every second factor from the account (an assisted recovery with reset_mfa, document 1
 * "Recovery and account administration"): TOTP, HOTP, passkeys, pending enrollments and remembered
 * devices go; unused recovery codes are spent rather than deleted, so the revocation log records
 * each one (migrations/0033_revocation_log.sql) and a restore does not bring them back.
 */
export async function resetSecondFactors(
  q: Tx,
  realmId: string,
  userId: string,
  now: Date,
): Promise<{ totp: number; hotp: number; passkeys: number; recoveryCodes: number }> {
  const del = async (table: string) =>
    (await q.query(`delete from ${table} where realm_id = $1 and user_id = $2`, [realmId, userId])).rowCount;
  const totp = await del('totp_credentials');
  const hotp = await del('hotp_credentials');
  const passkeys = await del('webauthn_credentials');
  await del('factor_enrollments');
  await del('remembered_devices');
  const codes = await q.query(
    'update recovery_codes set used_at = $3 where realm_id = $1 and user_id = $2 and used_at is null',
    [realmId, userId, now],
  );
  return { totp, hotp, passkeys, recoveryCodes: codes.rowCount };
}

/** What the account holds, for its own overview (GET /me/factors): presence and counts only. */
export const factorOverview = (q: Queryable, realmId: string, userId: string) =>
  one<{ password: boolean; totp: boolean; hotp: boolean; passkeys: number; codes: number }>(
    q,
    `select exists (select 1 from password_credentials where realm_id = $1 and user_id = $2) as password,
            exists (select 1 from totp_credentials where realm_id = $1 and user_id = $2) as totp,
            exists (select 1 from hotp_credentials where realm_id = $1 and user_id = $2) as hotp,
            (select count(*)::int from webauthn_credentials where realm_id = $1 and user_id = $2) as passkeys,
            (select count(*)::int from recovery_codes
              where realm_id = $1 and user_id = $2 and used_at is null) as codes`,
    [realmId, userId],
  );
