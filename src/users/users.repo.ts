import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { asciiLower, type IdentifierType, identifierKey } from './identifiers.ts';
import type { PasswordVerifier } from './password-hasher.ts';

export interface UserRow {
  realm_id: string;
  id: string;
  state: string;
  display_name: string | null;
  required_actions: string[];
  created_via: string;
  created_at: Date;
  updated_at: Date;
  /** When the profile (display name, identifiers) last changed: UserInfo's updated_at. */
  profile_updated_at: Date;
  last_login_at: Date | null;
  /** A deactivation an administrator scheduled (lifecycle rule scheduled_deactivation). */
  deactivate_at?: Date | null;
  deactivation_reason?: string | null;
}

export interface IdentifierRow {
  id: string;
  user_id: string;
  type: IdentifierType;
  value: string;
  verified: boolean;
  is_primary: boolean;
  created_at: Date;
}

export async function insertUser(
  tx: Tx,
  u: { realmId: string; displayName: string | null; requiredActions: string[]; createdVia: string },
  now: Date,
): Promise<UserRow> {
  const r = await tx.query<UserRow>(
    `insert into users (realm_id, id, state, display_name, required_actions, created_via, created_at, updated_at,
       profile_updated_at)
     values ($1, $2, 'active', $3, $4, $5, $6, $6, $6) returning *`,
    [u.realmId, newId('usr', now.getTime()), u.displayName, u.requiredActions, u.createdVia, now],
  );
  return r.rows[0] as UserRow;
}

export async function insertIdentifier(
  tx: Tx,
  i: {
    realmId: string;
    userId: string;
    type: IdentifierType;
    value: string;
    verified: boolean;
    primary: boolean;
  },
  now: Date,
): Promise<string> {
  const id = newId('idf', now.getTime());
  await tx.query(
    `insert into user_identifiers (realm_id, id, user_id, type, value, value_key, verified, verified_at, is_primary, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, case when $7 then $9::timestamptz end, $8, $9)`,
    [i.realmId, id, i.userId, i.type, i.value, identifierKey(i.type, i.value), i.verified, i.primary, now],
  );
  return id;
}

export const findUserByIdentifier = (q: Queryable, realmId: string, type: IdentifierType, value: string) =>
  maybeOne<UserRow>(
    q,
    `select u.* from user_identifiers i join users u on u.realm_id = i.realm_id and u.id = i.user_id
      where i.realm_id = $1 and i.type = $2 and i.value_key = $3`,
    [realmId, type, identifierKey(type, value)],
  );

/**
 * The account an identifier names, as findUserByIdentifier, but an email address counts only once
 * verified: a name asserted by someone else (a certificate authority) never lands on an account
 * whose address nobody proved.
 */
export const findUserByVerifiedIdentifier = (
  q: Queryable,
  realmId: string,
  type: IdentifierType,
  value: string,
) =>
  maybeOne<UserRow>(
    q,
    `select u.* from user_identifiers i join users u on u.realm_id = i.realm_id and u.id = i.user_id
      where i.realm_id = $1 and i.type = $2 and i.value_key = $3 and (i.type <> 'email' or i.verified)`,
    [realmId, type, identifierKey(type, value)],
  );

export const countUsers = async (q: Queryable, realmId: string): Promise<number> =>
  Number(
    (await q.query<{ n: string }>('select count(*) as n from users where realm_id = $1', [realmId])).rows[0]
      ?.n ?? 0,
  );

export async function findPasswordVerifier(
  q: Queryable,
  realmId: string,
  userId: string,
): Promise<PasswordVerifier | null> {
  const r = await q.query<{ hash: string; pepper_version: number | null }>(
    'select hash, pepper_version from password_credentials where realm_id = $1 and user_id = $2',
    [realmId, userId],
  );
  const row = r.rows[0];
  return row
    ? { hash: row.hash, pepperVersion: row.pepper_version === null ? null : Number(row.pepper_version) }
    : null;
}

/** Sets the account's password verifier: the first one, or a replacement (which clears `compromised`). */
export async function setPassword(tx: Tx, realmId: string, userId: string, v: PasswordVerifier, now: Date) {
  await tx.query(
    `insert into password_credentials (realm_id, user_id, hash, pepper_version, created_at) values ($1, $2, $3, $4, $5)
     on conflict (realm_id, user_id) do update set hash = excluded.hash, pepper_version = excluded.pepper_version,
       compromised = false, created_at = excluded.created_at`,
    [realmId, userId, v.hash, v.pepperVersion, now],
  );
}

/**
 * Replaces a verifier with the same password under the active pepper (a re-peppered one, or the
 * realm's Argon2id in place of an imported one), only while the stored one is still `oldHash` (a
 * password changed meanwhile stays); the compromised flag is kept.
 */
export async function repepperPassword(
  tx: Tx,
  realmId: string,
  userId: string,
  oldHash: string,
  v: PasswordVerifier,
) {
  await tx.query(
    `update password_credentials set hash = $4, pepper_version = $5
      where realm_id = $1 and user_id = $2 and hash = $3`,
    [realmId, userId, oldHash, v.hash, v.pepperVersion],
  );
}

export async function removeRequiredAction(
  tx: Tx,
  realmId: string,
  userId: string,
  action: string,
  now: Date,
) {
  await tx.query(
    `update users set required_actions = array_remove(required_actions, $3), updated_at = $4
      where realm_id = $1 and id = $2`,
    [realmId, userId, action, now],
  );
}

export async function setUserState(tx: Tx, realmId: string, userId: string, state: string, now: Date) {
  await tx.query('update users set state = $3, updated_at = $4 where realm_id = $1 and id = $2', [
    realmId,
    userId,
    state,
    now,
  ]);
}

/** Resolves what a person typed (email, E.164 phone or username) to an account. */
export function identifierTypeOf(input: string): IdentifierType {
  if (input.includes('@')) return 'email';
  if (input.startsWith('+')) return 'phone';
  return 'username';
}

// ---- administration (users.admin.ts) -------------------------------------------------------

/** An account that exists for the API: a deleted one is gone. */
export const findUser = (q: Queryable, realmId: string, userId: string) =>
  maybeOne<UserRow>(q, `select * from users where realm_id = $1 and id = $2 and state <> 'deleted'`, [
    realmId,
    userId,
  ]);

/** Like findUser, holding the row until the transaction ends (state changes serialize on it). */
export const lockUser = (tx: Tx, realmId: string, userId: string) =>
  maybeOne<UserRow>(
    tx,
    `select * from users where realm_id = $1 and id = $2 and state <> 'deleted' for update`,
    [realmId, userId],
  );

/** Identifiers of some accounts, primary first. */
export const listIdentifiers = (q: Queryable, realmId: string, userIds: readonly string[]) =>
  many<IdentifierRow>(
    q,
    `select id, user_id, type, value, verified, is_primary, created_at from user_identifiers
      where realm_id = $1 and user_id = any($2::text[]) order by is_primary desc, id`,
    [realmId, userIds],
  );

/**
 * One keyset page of accounts in id (creation) order. The identifier filter matches exactly,
 * ignoring ASCII case for email and username as sign-in does.
 */
export function listUsers(
  q: Queryable,
  realmId: string,
  page: { after: string | null; limit: number; identifier: string | null },
) {
  const { identifier } = page;
  return many<UserRow>(
    q,
    `select u.* from users u
      where u.realm_id = $1 and u.state <> 'deleted' and ($2::text is null or u.id > $2)
        and ($4::text is null or exists (
          select 1 from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id
             and ((i.type = 'phone' and i.value_key = $4) or (i.type <> 'phone' and i.value_key = $5))))
      order by u.id limit $3`,
    [realmId, page.after, page.limit, identifier, identifier === null ? null : asciiLower(identifier)],
  );
}

export async function addRequiredAction(tx: Tx, realmId: string, userId: string, action: string, now: Date) {
  await tx.query(
    `update users set required_actions = array_append(array_remove(required_actions, $3), $3), updated_at = $4
      where realm_id = $1 and id = $2`,
    [realmId, userId, action, now],
  );
}

/**
 * Changes profile members; only these calls move profile_updated_at (a sign-in, a required action
 * or a state change does not). Returns the row as it is now.
 */
export async function updateProfile(
  tx: Tx,
  realmId: string,
  userId: string,
  change: { displayName: string | null },
  now: Date,
): Promise<UserRow> {
  const r = await tx.query<UserRow>(
    `update users set display_name = $3, updated_at = $4, profile_updated_at = $4
      where realm_id = $1 and id = $2 returning *`,
    [realmId, userId, change.displayName, now],
  );
  return r.rows[0] as UserRow;
}

/** Flags the account's password as known to others; false when it has none. */
export async function markPasswordCompromised(tx: Tx, realmId: string, userId: string): Promise<boolean> {
  const r = await tx.query(
    'update password_credentials set compromised = true where realm_id = $1 and user_id = $2',
    [realmId, userId],
  );
  return r.rowCount > 0;
}

/** Marks the account's identifiers of a type verified (a code sent there came back). */
export async function markIdentifierVerified(
  tx: Tx,
  realmId: string,
  userId: string,
  type: IdentifierType,
  value: string,
  now: Date,
): Promise<void> {
  await tx.query(
    `update user_identifiers set verified = true, verified_at = coalesce(verified_at, $5)
      where realm_id = $1 and user_id = $2 and type = $3 and value_key = $4`,
    [realmId, userId, type, identifierKey(type, value), now],
  );
}

/** Merges profile attribute values into the account's attributes. */
export async function mergeUserAttributes(
  tx: Tx,
  realmId: string,
  userId: string,
  values: Record<string, unknown>,
  now: Date,
): Promise<void> {
  await tx.query(
    `update users set attributes = attributes || $3::jsonb, updated_at = $4, profile_updated_at = $4
      where realm_id = $1 and id = $2`,
    [realmId, userId, JSON.stringify(values), now],
  );
}

export async function markGuest(tx: Tx, realmId: string, userId: string): Promise<void> {
  await tx.query('update users set is_guest = true where realm_id = $1 and id = $2', [realmId, userId]);
}

/** Self-service deletion request: pending_deletion until `due`, then the worker erases it. */
export async function requestDeletion(tx: Tx, realmId: string, userId: string, due: Date, now: Date) {
  await tx.query(
    `update users set state = 'pending_deletion', deletion_due_at = $3, updated_at = $4
      where realm_id = $1 and id = $2`,
    [realmId, userId, due, now],
  );
}

export async function cancelDeletion(tx: Tx, realmId: string, userId: string, now: Date) {
  await tx.query(
    `update users set state = 'active', deletion_due_at = null, updated_at = $3
      where realm_id = $1 and id = $2 and state = 'pending_deletion'`,
    [realmId, userId, now],
  );
}

/** Accounts whose self-service deletion grace period has passed. */
export async function dueDeletions(q: Queryable, now: Date, limit: number) {
  const r = await q.query<{ realm_id: string; id: string }>(
    `select realm_id, id from users where state = 'pending_deletion' and deletion_due_at <= $1
      order by deletion_due_at limit $2`,
    [now, limit],
  );
  return r.rows;
}

/** The account's primary email address (else its first), or null. */
export async function primaryEmail(q: Queryable, realmId: string, userId: string): Promise<string | null> {
  const r = await q.query<{ value: string }>(
    `select value from user_identifiers where realm_id = $1 and user_id = $2 and type = 'email'
      order by is_primary desc, created_at limit 1`,
    [realmId, userId],
  );
  return r.rows[0]?.value ?? null;
}

/**
 * The account's primary email address, whether it is verified, and the language its profile names
 * (attribute locale): where and in which language mail about the account goes. Null without an
 * email address.
 */
export const primaryEmailContact = (q: Queryable, realmId: string, userId: string) =>
  maybeOne<{ email: string; verified: boolean; locale: string | null }>(
    q,
    `select i.value as email, i.verified, u.attributes->>'locale' as locale
       from user_identifiers i join users u on u.realm_id = i.realm_id and u.id = i.user_id
      where i.realm_id = $1 and i.user_id = $2 and i.type = 'email'
      order by i.is_primary desc, i.created_at limit 1`,
    [realmId, userId],
  );

// ---- identifier administration and lifecycle (identifiers.admin.ts, lifecycle.*.ts) -----------

/** The account holding an identifier value in the realm, if any. */
export const findIdentifierHolder = (q: Queryable, realmId: string, type: IdentifierType, value: string) =>
  maybeOne<{ user_id: string; verified: boolean }>(
    q,
    'select user_id, verified from user_identifiers where realm_id = $1 and type = $2 and value_key = $3',
    [realmId, type, identifierKey(type, value)],
  );

export async function markIdentifierVerifiedById(tx: Tx, realmId: string, id: string, now: Date) {
  await tx.query(
    'update user_identifiers set verified = true, verified_at = $3 where realm_id = $1 and id = $2',
    [realmId, id, now],
  );
}

/** Makes the identifier the account's only primary one of its type. */
export async function setPrimaryIdentifier(
  tx: Tx,
  realmId: string,
  userId: string,
  type: IdentifierType,
  id: string,
) {
  await tx.query(
    'update user_identifiers set is_primary = (id = $4) where realm_id = $1 and user_id = $2 and type = $3',
    [realmId, userId, type, id],
  );
}

/** The profile (identifiers included) changed: the time UserInfo reports as updated_at moves. */
export async function touchProfile(tx: Tx, realmId: string, userId: string, now: Date) {
  await tx.query(
    'update users set profile_updated_at = $3, updated_at = $3 where realm_id = $1 and id = $2',
    [realmId, userId, now],
  );
}

/** Sets (or, with null, clears) the account's scheduled deactivation. */
export async function setScheduledDeactivation(
  tx: Tx,
  realmId: string,
  userId: string,
  schedule: { at: Date; reason: string } | null,
  now: Date,
) {
  await tx.query(
    `update users set deactivate_at = $3, deactivation_reason = $4, updated_at = $5
      where realm_id = $1 and id = $2`,
    [realmId, userId, schedule?.at ?? null, schedule?.reason ?? null, now],
  );
}

/** The dormant rule reported the account's current dormancy. */
export async function flagDormant(tx: Tx, realmId: string, userId: string, now: Date) {
  await tx.query('update users set dormant_flagged_at = $3 where realm_id = $1 and id = $2', [
    realmId,
    userId,
    now,
  ]);
}
