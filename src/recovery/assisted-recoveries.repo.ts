// SQL of the assisted recovery requests (migrations/0044_assisted_recoveries.sql). Every statement
// filters on the realm.
import type { Actor } from '../kernel/call.ts';
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface RecoveryRow {
  realm_id: string;
  id: string;
  user_id: string;
  status: string;
  mode: 'immediate' | 'cooling_off';
  reason: string | null;
  evidence_reference: string | null;
  reset_mfa: boolean;
  approval_required: boolean;
  requested_by_type: string;
  requested_by_id: string;
  approved_by_type: string | null;
  approved_by_id: string | null;
  approved_at: Date | null;
  cancelled_by_type: string | null;
  cancelled_by_id: string | null;
  cancel_reason: string | null;
  cancelled_at: Date | null;
  effective_at: Date;
  expires_at: Date;
  executed_at: Date | null;
  setup_token_digest: string | null;
  setup_expires_at: Date | null;
  setup_used_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewRecovery {
  realmId: string;
  id: string;
  userId: string;
  status: 'scheduled' | 'executed';
  mode: 'immediate' | 'cooling_off';
  reason: string;
  evidenceReference: string | null;
  resetMfa: boolean;
  approvalRequired: boolean;
  requestedBy: { type: string; id: string };
  effectiveAt: Date;
  expiresAt: Date;
}

export async function insertRecovery(q: Tx, r: NewRecovery, now: Date): Promise<void> {
  await q.query(
    `insert into assisted_recoveries (realm_id, id, user_id, status, mode, reason, evidence_reference,
       reset_mfa, approval_required, requested_by_type, requested_by_id, effective_at, expires_at,
       created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
    [
      r.realmId,
      r.id,
      r.userId,
      r.status,
      r.mode,
      r.reason,
      r.evidenceReference,
      r.resetMfa,
      r.approvalRequired,
      r.requestedBy.type,
      r.requestedBy.id,
      r.effectiveAt,
      r.expiresAt,
      now,
    ],
  );
}

export const lockRecovery = (q: Tx, realmId: string, id: string) =>
  maybeOne<RecoveryRow>(q, 'select * from assisted_recoveries where realm_id = $1 and id = $2 for update', [
    realmId,
    id,
  ]);

/** Open requests of the account, oldest first (one open request at a time: checked by the caller). */
export const openRecoveriesOf = (q: Tx, realmId: string, userId: string) =>
  many<RecoveryRow>(
    q,
    `select * from assisted_recoveries
      where realm_id = $1 and user_id = $2 and status in ('scheduled', 'approved')
      order by created_at for update`,
    [realmId, userId],
  );

/** The account's requests, newest first (the owner's view). */
export const recoveriesOf = (q: Queryable, realmId: string, userId: string, limit: number) =>
  many<RecoveryRow>(
    q,
    `select * from assisted_recoveries where realm_id = $1 and user_id = $2
      order by created_at desc, id desc limit ${Math.trunc(limit)}`,
    [realmId, userId],
  );

export async function markApproved(q: Tx, realmId: string, id: string, by: Actor, now: Date): Promise<void> {
  await q.query(
    `update assisted_recoveries set status = 'approved', approved_by_type = $3, approved_by_id = $4,
       approved_at = $5, updated_at = $5 where realm_id = $1 and id = $2`,
    [realmId, id, by.type, by.id, now],
  );
}

export async function markCancelled(
  q: Tx,
  realmId: string,
  id: string,
  by: Actor,
  reason: string,
  now: Date,
): Promise<void> {
  await q.query(
    `update assisted_recoveries set status = 'cancelled', cancelled_by_type = $3, cancelled_by_id = $4,
       cancel_reason = $5, cancelled_at = $6, updated_at = $6 where realm_id = $1 and id = $2`,
    [realmId, id, by.type, by.id, reason, now],
  );
}

export async function markExpired(q: Tx, realmId: string, id: string, now: Date): Promise<void> {
  await q.query(
    `update assisted_recoveries set status = 'expired', updated_at = $3 where realm_id = $1 and id = $2`,
    [realmId, id, now],
  );
}

export async function markExecuted(
  q: Tx,
  realmId: string,
  id: string,
  setup: { digest: string; expiresAt: Date },
  now: Date,
): Promise<void> {
  await q.query(
    `update assisted_recoveries set status = 'executed', executed_at = $3, setup_token_digest = $4,
       setup_expires_at = $5, updated_at = $3 where realm_id = $1 and id = $2`,
    [realmId, id, now, setup.digest, setup.expiresAt],
  );
}

/** The executed request whose setup link carries this digest, locked. */
export const lockBySetupDigest = (q: Tx, realmId: string, digest: string) =>
  maybeOne<RecoveryRow>(
    q,
    `select * from assisted_recoveries
      where realm_id = $1 and setup_token_digest = $2 and status = 'executed' for update`,
    [realmId, digest],
  );

export async function markSetupUsed(q: Tx, realmId: string, id: string, now: Date): Promise<void> {
  await q.query(
    'update assisted_recoveries set setup_used_at = $3, updated_at = $3 where realm_id = $1 and id = $2',
    [realmId, id, now],
  );
}

/**
 * Open requests with something to do at `now` across realms, oldest first: effective and approved
 * (or needing no approval), or past their expiry.
 */
export const dueRecoveries = (q: Queryable, now: Date, limit: number) =>
  many<{ realm_id: string; id: string }>(
    q,
    `select realm_id, id from assisted_recoveries
      where status in ('scheduled', 'approved') and effective_at <= $1
        and (status = 'approved' or not approval_required or expires_at <= $1)
      order by effective_at limit ${Math.trunc(limit)}`,
    [now],
  );
