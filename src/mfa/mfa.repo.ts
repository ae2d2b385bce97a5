// TOTP credentials and recovery codes. Seeds are sealed under the root key (purpose totp-seed,
// bound to the account); recovery codes are stored only as digests.
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { OtpAlgorithm } from './otp.ts';
import { recoveryCodeDigest } from './recovery-codes.ts';

export const totpSeedContext = (realmId: string, userId: string) => `totp/${realmId}/${userId}`;

export interface StoredTotp {
  secret_sealed: string;
  last_used_step: string | null;
  digits: number;
  period_seconds: number;
  algorithm: OtpAlgorithm;
}

export async function lockTotp(q: Tx, realmId: string, userId: string) {
  return maybeOne<StoredTotp>(
    q,
    `select secret_sealed, last_used_step, digits, period_seconds, algorithm from totp_credentials
      where realm_id = $1 and user_id = $2 for update`,
    [realmId, userId],
  );
}

export async function recordTotpStep(q: Tx, realmId: string, userId: string, step: number): Promise<void> {
  await q.query('update totp_credentials set last_used_step = $3 where realm_id = $1 and user_id = $2', [
    realmId,
    userId,
    step,
  ]);
}

/** Replaces the account's authenticator (one TOTP per account). */
export async function storeTotp(
  q: Tx,
  keyring: RootKeyring,
  realmId: string,
  userId: string,
  secret: Buffer,
  usedStep: number,
  now: Date,
): Promise<void> {
  const sealed = keyring.encrypt('totp-seed', secret, totpSeedContext(realmId, userId));
  await q.query(
    `insert into totp_credentials (realm_id, user_id, secret_sealed, last_used_step, created_at)
     values ($1, $2, $3, $4, $5)
     on conflict (realm_id, user_id) do update
       set secret_sealed = excluded.secret_sealed, last_used_step = excluded.last_used_step, created_at = excluded.created_at,
           digits = 6, period_seconds = 30, algorithm = 'SHA1'`,
    [realmId, userId, sealed, usedStep, now],
  );
}

/** Replaces every recovery code of the account with a new batch. */
export async function replaceRecoveryCodes(
  q: Tx,
  realmId: string,
  userId: string,
  codes: string[],
  now: Date,
) {
  await q.query('delete from recovery_codes where realm_id = $1 and user_id = $2', [realmId, userId]);
  const batch = newId('rcb', now.getTime());
  // One statement for the whole batch: the revocation log records a replaced batch once per
  // inserting statement (migrations/0033_revocation_log.sql), so a row-by-row insert logged it ten times.
  await q.query(
    `insert into recovery_codes (realm_id, user_id, code_digest, batch_id, created_at)
     select $1, $2, d, $4, $5 from unnest($3::text[]) as d`,
    [realmId, userId, codes.map(recoveryCodeDigest), batch, now],
  );
}

/** Spends one unused recovery code; false when it is unknown or already used. */
export async function consumeRecoveryCode(q: Tx, realmId: string, userId: string, code: string, now: Date) {
  const r = await q.query(
    `update recovery_codes set used_at = $4
      where realm_id = $1 and user_id = $2 and code_digest = $3 and used_at is null`,
    [realmId, userId, recoveryCodeDigest(code), now],
  );
  return r.rowCount === 1;
}

/** A TOTP authenticator carried over from another system (docs/migration.md, TOTP seeds). */
export interface ImportedTotp {
  userId: string;
  secret: Buffer;
  digits: number;
  periodSeconds: number;
  algorithm: OtpAlgorithm;
}

/** Stores imported authenticators of new accounts, sealed like enrolled ones, in one statement. */
export async function insertImportedTotps(
  q: Tx,
  keyring: RootKeyring,
  realmId: string,
  rows: readonly ImportedTotp[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `insert into totp_credentials (realm_id, user_id, secret_sealed, last_used_step, created_at, digits,
       period_seconds, algorithm)
     select $1, u, s, null, $2, d, p, a
       from unnest($3::text[], $4::text[], $5::int[], $6::int[], $7::text[]) as t(u, s, d, p, a)`,
    [
      realmId,
      now,
      rows.map((r) => r.userId),
      rows.map((r) => keyring.encrypt('totp-seed', r.secret, totpSeedContext(realmId, r.userId))),
      rows.map((r) => r.digits),
      rows.map((r) => r.periodSeconds),
      rows.map((r) => r.algorithm),
    ],
  );
}

/** The stored TOTP authenticators of some accounts, for the import reconciliation's sample. */
export const sampleTotps = (q: Queryable, realmId: string, userIds: readonly string[]) =>
  many<StoredTotp & { user_id: string }>(
    q,
    `select user_id, secret_sealed, last_used_step, digits, period_seconds, algorithm from totp_credentials
      where realm_id = $1 and user_id = any($2::text[])`,
    [realmId, userIds],
  );
