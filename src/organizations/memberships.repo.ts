// SQL of memberships and the role assignments held through them. A removed or expired
// membership is history: a later membership of the same user is a new row.

import { many, maybeOne, one, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { MembershipRoleRow, MembershipRow, MembershipState } from './organizations.types.ts';

export interface NewMembership {
  orgId: string;
  userId: string;
  state: MembershipState;
  source: string;
  externalId?: string | null;
  metadata?: Record<string, unknown>;
  expiresAt?: Date | null;
}

export async function insertMembership(
  tx: Tx,
  realmId: string,
  m: NewMembership,
  now: Date,
): Promise<MembershipRow> {
  const r = await tx.query<MembershipRow>(
    `insert into memberships (realm_id, id, organization_id, user_id, state, source, external_id, metadata,
       joined_at, expires_at, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, case when $5 = 'active' then $10::timestamptz end, $9, $10, $10)
     returning *`,
    [
      realmId,
      newId('mem', now.getTime()),
      m.orgId,
      m.userId,
      m.state,
      m.source,
      m.externalId ?? null,
      JSON.stringify(m.metadata ?? {}),
      m.expiresAt ?? null,
      now,
    ],
  );
  return r.rows[0] as MembershipRow;
}

/** The user's membership of the organization that is not removed or expired, if any. */
export const findLiveMembership = (q: Queryable, realmId: string, orgId: string, userId: string) =>
  maybeOne<MembershipRow>(
    q,
    `select * from memberships where realm_id = $1 and organization_id = $2 and user_id = $3
        and state not in ('removed', 'expired')`,
    [realmId, orgId, userId],
  );

/** Live memberships (not removed or expired) the account holds in any organization. */
export const countLiveMembershipsOfUser = async (q: Queryable, realmId: string, userId: string) =>
  (
    await one<{ n: number }>(
      q,
      `select count(*)::int as n from memberships
        where realm_id = $1 and user_id = $2 and state not in ('removed', 'expired')`,
      [realmId, userId],
    )
  ).n;

export const lockMembership = (tx: Tx, realmId: string, orgId: string, membershipId: string) =>
  maybeOne<MembershipRow>(
    tx,
    'select * from memberships where realm_id = $1 and organization_id = $2 and id = $3 for update',
    [realmId, orgId, membershipId],
  );

export const findMembership = (q: Queryable, realmId: string, orgId: string, membershipId: string) =>
  maybeOne<MembershipRow>(
    q,
    'select * from memberships where realm_id = $1 and organization_id = $2 and id = $3',
    [realmId, orgId, membershipId],
  );

export const listMemberships = (
  q: Queryable,
  realmId: string,
  orgId: string,
  page: { after: string | null; limit: number; state: string | null },
) =>
  many<MembershipRow>(
    q,
    `select * from memberships
      where realm_id = $1 and organization_id = $2 and ($3::text is null or id > $3)
        and ($5::text is null or state = $5)
      order by id limit $4`,
    [realmId, orgId, page.after, page.limit, page.state],
  );

/** Moves the state; authorization_revision counts every change (doc 2, Catalog). */
export async function setMembershipState(
  tx: Tx,
  realmId: string,
  membershipId: string,
  change: { state: MembershipState; endedReason?: string; joined?: boolean },
  now: Date,
): Promise<MembershipRow> {
  const r = await tx.query<MembershipRow>(
    `update memberships set state = $3, authorization_revision = authorization_revision + 1,
       ended_reason = coalesce($4, ended_reason),
       joined_at = case when $5 then $6 else joined_at end, updated_at = $6
      where realm_id = $1 and id = $2 returning *`,
    [realmId, membershipId, change.state, change.endedReason ?? null, change.joined === true, now],
  );
  return r.rows[0] as MembershipRow;
}

// ---- roles held through memberships ------------------------------------------------------------

export const membershipRoles = (q: Queryable, realmId: string, membershipIds: readonly string[]) =>
  many<MembershipRoleRow>(
    q,
    `select ra.membership_id, ra.id as assignment_id, ra.role_id, r.name
       from role_assignments ra join roles r on r.realm_id = ra.realm_id and r.id = ra.role_id
      where ra.realm_id = $1 and ra.membership_id = any ($2::text[]) order by r.name, ra.id`,
    [realmId, membershipIds],
  );

export interface OrgRoleRow {
  id: string;
  name: string;
  builtin: boolean;
  permissions: string[];
}

/** Roles assignable inside the organization: realm-wide organization roles and its own ones. */
export const findAssignableRoles = (
  q: Queryable,
  realmId: string,
  orgId: string,
  roleIds: readonly string[],
) =>
  many<OrgRoleRow>(
    q,
    `select id, name, builtin, permissions from roles
      where realm_id = $1 and id = any ($3::text[]) and scope = 'organization' and project_id is null
        and (organization_id is null or organization_id = $2)`,
    [realmId, orgId, roleIds],
  );

/** An assignment of this role to the user inside the organization, however it is held. */
export const findOrgAssignment = (
  q: Queryable,
  realmId: string,
  orgId: string,
  userId: string,
  roleId: string,
) =>
  maybeOne<{ id: string; membership_id: string | null }>(
    q,
    `select id, membership_id from role_assignments
      where realm_id = $1 and role_id = $4 and subject_type = 'user' and subject_id = $3
        and scope_type = 'organization' and scope_id = $2`,
    [realmId, orgId, userId, roleId],
  );

/**
 * Assigns the role through the membership; null when the user holds it in the organization
 * already (a direct assignment made while invited, say), which then stays as it is.
 */
export async function insertMembershipAssignment(
  tx: Tx,
  realmId: string,
  a: {
    orgId: string;
    membershipId: string;
    userId: string;
    roleId: string;
    source: string;
    reason?: string | null;
  },
  now: Date,
): Promise<string | null> {
  const r = await tx.query<{ id: string }>(
    `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source,
       reason, membership_id, created_at)
     values ($1, $2, $3, 'user', $4, 'organization', $5, $6, $7, $8, $9) on conflict do nothing returning id`,
    [
      realmId,
      newId('ras', now.getTime()),
      a.roleId,
      a.userId,
      a.orgId,
      a.source,
      a.reason ?? null,
      a.membershipId,
      now,
    ],
  );
  return r.rows[0]?.id ?? null;
}

/**
 * Every organization-scope assignment of the user in the organization, held through a membership
 * or directly: none may outlive the membership, or it would count again on a later one.
 */
export async function deleteOrgAssignmentsOfUser(
  tx: Tx,
  realmId: string,
  orgId: string,
  userId: string,
): Promise<{ id: string; role_id: string }[]> {
  const r = await tx.query<{ id: string; role_id: string }>(
    `delete from role_assignments where realm_id = $1 and subject_type = 'user' and subject_id = $3
        and scope_type = 'organization' and scope_id = $2 returning id, role_id`,
    [realmId, orgId, userId],
  );
  return r.rows;
}

/** The user leaves every group of the organization (realm-wide groups are not the organization's). */
export async function leaveOrgGroups(
  tx: Tx,
  realmId: string,
  orgId: string,
  userId: string,
): Promise<number> {
  const r = await tx.query(
    `delete from group_members gm using groups g
      where gm.realm_id = $1 and gm.subject_type = 'user' and gm.subject_id = $3
        and g.realm_id = gm.realm_id and g.id = gm.group_id and g.organization_id = $2`,
    [realmId, orgId, userId],
  );
  return r.rowCount;
}

/** Roles the user is assigned at the organization's scope, through the membership or directly. */
export async function orgRoleIdsOfUser(
  q: Queryable,
  realmId: string,
  orgId: string,
  userId: string,
  now: Date,
): Promise<string[]> {
  const r = await many<{ role_id: string }>(
    q,
    `select role_id from role_assignments where realm_id = $1 and subject_type = 'user' and subject_id = $3
        and scope_type = 'organization' and scope_id = $2 and (expires_at is null or expires_at > $4)`,
    [realmId, orgId, userId, now],
  );
  return r.map((x) => x.role_id);
}

/** Users with an active membership, whose permissions change with the organization's state. */
export async function activeMemberIds(q: Queryable, realmId: string, orgId: string): Promise<string[]> {
  const r = await q.query<{ user_id: string }>(
    `select user_id from memberships where realm_id = $1 and organization_id = $2 and state = 'active'`,
    [realmId, orgId],
  );
  return r.rows.map((x) => x.user_id);
}
