// Device authorizations (RFC 8628, migrations/0035): the rows the device authorization endpoint
// creates, the sign-in transaction approves or denies, and the token endpoint spends once.
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { maybeOne } from '../platform/db/db.ts';

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface DeviceAuthorizationRow {
  realm_id: string;
  id: string;
  device_code_digest: string;
  client_id: string;
  scopes: string[];
  resources: string[];
  status: DeviceStatus;
  transaction_id: string | null;
  user_id: string | null;
  session_id: string | null;
  org_id: string | null;
  granted_scopes: string[] | null;
  interval_seconds: number;
  last_polled_at: Date | null;
  expires_at: Date;
  created_at: Date;
}

export interface NewDeviceAuthorization {
  realmId: string;
  id: string;
  deviceCodeDigest: string;
  userCodeDigest: string;
  clientId: string;
  scopes: string[];
  resources: string[];
  intervalSeconds: number;
  expiresAt: Date;
}

/** False when the user code digest is taken by another row (the caller draws another code). */
export async function insertDeviceAuthorization(
  q: Queryable,
  d: NewDeviceAuthorization,
  now: Date,
): Promise<boolean> {
  const r = await q.query(
    `insert into device_authorizations (realm_id, id, device_code_digest, user_code_digest, client_id, scopes,
       resources, status, interval_seconds, expires_at, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10)
     on conflict (realm_id, user_code_digest) do nothing`,
    [
      d.realmId,
      d.id,
      d.deviceCodeDigest,
      d.userCodeDigest,
      d.clientId,
      d.scopes,
      d.resources,
      d.intervalSeconds,
      d.expiresAt,
      now,
    ],
  );
  return r.rowCount === 1;
}

/** A pending, unexpired authorization by its user code. */
export const findWaitingByUserCode = (q: Queryable, realmId: string, userCodeDigest: string, now: Date) =>
  maybeOne<DeviceAuthorizationRow>(
    q,
    `select * from device_authorizations
      where realm_id = $1 and user_code_digest = $2 and status = 'pending' and expires_at > $3 for update`,
    [realmId, userCodeDigest, now],
  );

export const lockByDeviceCode = (tx: Tx, realmId: string, deviceCodeDigest: string) =>
  maybeOne<DeviceAuthorizationRow>(
    tx,
    'select * from device_authorizations where realm_id = $1 and device_code_digest = $2 for update',
    [realmId, deviceCodeDigest],
  );

/** The same row unlocked: what a token hook is told, read before the grant's transaction. */
export const findByDeviceCode = (q: Queryable, realmId: string, deviceCodeDigest: string) =>
  maybeOne<DeviceAuthorizationRow>(
    q,
    'select * from device_authorizations where realm_id = $1 and device_code_digest = $2',
    [realmId, deviceCodeDigest],
  );

/** The transaction that took the user code last is the one whose outcome counts. */
export async function claimForTransaction(tx: Tx, realmId: string, id: string, transactionId: string) {
  await tx.query('update device_authorizations set transaction_id = $3 where realm_id = $1 and id = $2', [
    realmId,
    id,
    transactionId,
  ]);
}

export interface Approval {
  userId: string;
  sessionId: string;
  orgId: string | null;
  grantedScopes: string[];
}

/** Approves the authorization the transaction holds; null when it is no longer waiting. */
export async function approveForTransaction(
  tx: Tx,
  realmId: string,
  transactionId: string,
  a: Approval,
  now: Date,
): Promise<{ id: string; client_id: string } | null> {
  return maybeOne<{ id: string; client_id: string }>(
    tx,
    `update device_authorizations
        set status = 'approved', user_id = $3, session_id = $4, org_id = $5, granted_scopes = $6, decided_at = $7
      where realm_id = $1 and transaction_id = $2 and status = 'pending' and expires_at > $7
      returning id, client_id`,
    [realmId, transactionId, a.userId, a.sessionId, a.orgId, a.grantedScopes, now],
  );
}

export async function denyForTransaction(
  tx: Tx,
  realmId: string,
  transactionId: string,
  userId: string | null,
  now: Date,
): Promise<{ id: string; client_id: string } | null> {
  return maybeOne<{ id: string; client_id: string }>(
    tx,
    `update device_authorizations set status = 'denied', user_id = $3, decided_at = $4
      where realm_id = $1 and transaction_id = $2 and status = 'pending' and expires_at > $4
      returning id, client_id`,
    [realmId, transactionId, userId, now],
  );
}

export async function recordPoll(tx: Tx, row: DeviceAuthorizationRow, intervalSeconds: number, now: Date) {
  await tx.query(
    'update device_authorizations set last_polled_at = $3, interval_seconds = $4 where realm_id = $1 and id = $2',
    [row.realm_id, row.id, now, intervalSeconds],
  );
}

export async function markConsumed(tx: Tx, row: DeviceAuthorizationRow, now: Date) {
  await tx.query(
    `update device_authorizations set status = 'consumed', consumed_at = $3 where realm_id = $1 and id = $2`,
    [row.realm_id, row.id, now],
  );
}

/** Rows expired for a day are deleted by signin.cleanup; the user code digest is then free again. */
export async function deleteExpiredDeviceAuthorizations(
  db: Db,
  before: Date,
  batch: number,
): Promise<number> {
  const r = await db.query(
    `delete from device_authorizations where (realm_id, id) in (
       select realm_id, id from device_authorizations where expires_at < $1 limit ${batch})`,
    [before],
  );
  return r.rowCount ?? 0;
}
