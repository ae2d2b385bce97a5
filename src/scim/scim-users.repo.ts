// SQL for provisioned users (migrations 0037, 0053). Reads join the account for its state and
// display name; only accounts that still exist (not deleted) are served. `scope` is the connector
// whose accounts alone are seen (an organization connector's), or null for every provisioned one.
import { jsonColumn, many, maybeOne, one, type Queryable, type Tx } from '../platform/db/db.ts';

export interface ScimUserRow {
  user_id: string;
  connector_id: string;
  user_name: string;
  external_id: string | null;
  attributes: Record<string, unknown>;
  version: number;
  created_at: Date;
  updated_at: Date;
  state: string;
  display_name: string | null;
}

const SELECT = `select s.user_id, s.connector_id, s.user_name, s.external_id, s.attributes, s.version,
    s.created_at, s.updated_at, u.state, u.display_name
  from scim_users s join users u on u.realm_id = s.realm_id and u.id = s.user_id
  where s.realm_id = $1 and u.state <> 'deleted'`;

/** userName is unique ignoring case (RFC 7643 §4.1.1: caseExact false). */
export const userNameKey = (userName: string) => userName.toLowerCase();

function parsed(row: ScimUserRow | null): ScimUserRow | null {
  if (row) row.attributes = jsonColumn(row.attributes);
  return row;
}

const IN_SCOPE = (n: number) => `($${n}::text is null or s.connector_id = $${n})`;

export const findScimUser = async (q: Queryable, realmId: string, userId: string, scope: string | null) =>
  parsed(
    await maybeOne<ScimUserRow>(q, `${SELECT} and s.user_id = $2 and ${IN_SCOPE(3)}`, [
      realmId,
      userId,
      scope,
    ]),
  );

export const lockScimUser = async (tx: Tx, realmId: string, userId: string, scope: string | null) =>
  parsed(
    await maybeOne<ScimUserRow>(tx, `${SELECT} and s.user_id = $2 and ${IN_SCOPE(3)} for update of s`, [
      realmId,
      userId,
      scope,
    ]),
  );

export const findUserIdByUserName = async (q: Queryable, realmId: string, userName: string) =>
  (
    await maybeOne<{ user_id: string }>(
      q,
      'select user_id from scim_users where realm_id = $1 and user_name_key = $2',
      [realmId, userNameKey(userName)],
    )
  )?.user_id ?? null;

/** Rows an indexed equality names (userName, externalId or id); at most a handful. */
export const findScimUsersBy = async (
  q: Queryable,
  realmId: string,
  by: 'user_name' | 'external_id' | 'id',
  value: string,
  scope: string | null,
) => {
  const where =
    by === 'user_name'
      ? 's.user_name_key = $2'
      : by === 'external_id'
        ? 's.external_id = $2'
        : 's.user_id = $2';
  const rows = await many<ScimUserRow>(q, `${SELECT} and ${where} and ${IN_SCOPE(3)} order by s.user_id`, [
    realmId,
    by === 'user_name' ? userNameKey(value) : value,
    scope,
  ]);
  return rows.map((r) => parsed(r) as ScimUserRow);
};

export const countScimUsers = async (q: Queryable, realmId: string, scope: string | null) =>
  (
    await one<{ n: number }>(
      q,
      'select count(*)::int as n from scim_users where realm_id = $1 and ($2::text is null or connector_id = $2)',
      [realmId, scope],
    )
  ).n;

/**
 * One page of every provisioned user, in id order: $2 rows after offset $3. The page is cut from
 * scim_users alone (its primary key gives the order) before the accounts are joined: an erased
 * account has no SCIM record left, and a join under the offset would make the planner walk both
 * tables for every skipped row.
 */
export const pageScimUsers = async (
  q: Queryable,
  realmId: string,
  limit: number,
  offset: number,
  scope: string | null,
) =>
  (
    await many<ScimUserRow>(
      q,
      `select s.user_id, s.connector_id, s.user_name, s.external_id, s.attributes, s.version,
          s.created_at, s.updated_at, u.state, u.display_name
         from (select * from scim_users where realm_id = $1 and ($4::text is null or connector_id = $4)
                order by user_id limit $2 offset $3) s
         join users u on u.realm_id = s.realm_id and u.id = s.user_id
        order by s.user_id`,
      [realmId, limit, offset, scope],
    )
  ).map((r) => parsed(r) as ScimUserRow);

export const insertScimUser = (
  tx: Tx,
  realmId: string,
  u: { userId: string; connectorId: string; userName: string; externalId: string | null; attributes: object },
  now: Date,
) =>
  tx.query(
    `insert into scim_users (realm_id, user_id, connector_id, user_name, user_name_key, external_id, attributes,
       created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $8)`,
    [
      realmId,
      u.userId,
      u.connectorId,
      u.userName,
      userNameKey(u.userName),
      u.externalId,
      JSON.stringify(u.attributes),
      now,
    ],
  );

export const updateScimUser = (
  tx: Tx,
  realmId: string,
  u: { userId: string; userName: string; externalId: string | null; attributes: object },
  now: Date,
) =>
  tx.query(
    `update scim_users set user_name = $3, user_name_key = $4, external_id = $5, attributes = $6::jsonb,
       version = version + 1, updated_at = $7
      where realm_id = $1 and user_id = $2`,
    [realmId, u.userId, u.userName, userNameKey(u.userName), u.externalId, JSON.stringify(u.attributes), now],
  );

/** A change made through the account alone (displayName, active) still moves the ETag. */
export const touchScimUser = (tx: Tx, realmId: string, userId: string, now: Date) =>
  tx.query(
    'update scim_users set version = version + 1, updated_at = $3 where realm_id = $1 and user_id = $2',
    [realmId, userId, now],
  );

/** The SCIM record alone, when the account outlives its provisioning (an organization connector). */
export const deleteScimRecord = (tx: Tx, realmId: string, userId: string) =>
  tx.query('delete from scim_users where realm_id = $1 and user_id = $2', [realmId, userId]);
