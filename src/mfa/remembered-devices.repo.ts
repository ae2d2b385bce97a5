// Remembered devices (spec doc 1, login.remember_devices): a token shown once (the pa_rd cookie or
// one_time.remembered_device_token), stored as a digest, valid login.remember_device_days.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface RememberedDeviceRow {
  id: string;
  user_id: string;
  user_agent: string | null;
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
}

export async function insertRememberedDevice(
  q: Tx,
  d: {
    realmId: string;
    id: string;
    userId: string;
    tokenDigest: string;
    userAgent: string | null;
    now: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await q.query(
    `insert into remembered_devices (realm_id, id, user_id, token_digest, user_agent, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [d.realmId, d.id, d.userId, d.tokenDigest, d.userAgent, d.now, d.expiresAt],
  );
}

/** The live device a token names, for this account. */
export function findRememberedDevice(
  q: Queryable,
  realmId: string,
  userId: string,
  tokenDigest: string,
  now: Date,
) {
  return maybeOne<RememberedDeviceRow>(
    q,
    `select id, user_id, user_agent, created_at, expires_at, last_used_at from remembered_devices
      where realm_id = $1 and user_id = $2 and token_digest = $3 and expires_at > $4`,
    [realmId, userId, tokenDigest, now],
  );
}

export async function touchRememberedDevice(q: Tx, realmId: string, id: string, now: Date): Promise<void> {
  await q.query('update remembered_devices set last_used_at = $3 where realm_id = $1 and id = $2', [
    realmId,
    id,
    now,
  ]);
}

/** Forgets one device (by id) or every device of the account; returns how many. */
export async function forgetRememberedDevices(
  q: Tx,
  realmId: string,
  userId: string,
  id: string | null,
): Promise<number> {
  const r = await q.query(
    'delete from remembered_devices where realm_id = $1 and user_id = $2 and ($3::text is null or id = $3)',
    [realmId, userId, id],
  );
  return r.rowCount ?? 0;
}

/** The account's remembered devices that have not expired, newest first (never their tokens). */
export const listRememberedDevices = (q: Queryable, realmId: string, userId: string, now: Date) =>
  many<{
    id: string;
    user_agent: string | null;
    created_at: Date;
    expires_at: Date;
    last_used_at: Date | null;
  }>(
    q,
    `select id, user_agent, created_at, expires_at, last_used_at from remembered_devices
      where realm_id = $1 and user_id = $2 and expires_at > $3 order by created_at desc, id desc limit 100`,
    [realmId, userId, now],
  );
