import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { type IdentifierType, identifierKey } from './identifiers.ts';
import type { PasswordVerifier } from './password-hasher.ts';

export interface UserRow {
  realm_id: string;
  id: string;
  state: string;
  display_name: string | null;
  required_actions: string[];
  created_via: string;
  created_at: Date;
}

export async function insertUser(
  tx: Tx,
  u: { realmId: string; displayName: string | null; requiredActions: string[]; createdVia: string },
  now: Date,
): Promise<UserRow> {
  const r = await tx.query<UserRow>(
    `insert into users (realm_id, id, state, display_name, required_actions, created_via, created_at, updated_at)
     values ($1, $2, 'active', $3, $4, $5, $6, $6) returning *`,
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
