// Rules every membership use case shares: which organizations accept changes, which users and
// roles may be named, the delegation ceiling, assigning roles through a membership and ending a
// membership (doc 2, Organization membership: only active memberships count anywhere).

import { recorder } from '../audit/index.ts';
import { maybeOne, type Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { roleProblem } from '../roles/admin-call.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { type CallerAuthority, callerAuthority, ensureWithinCeiling } from '../roles/delegation.ts';
import { heldRoleIds, loadRoleGraph } from '../roles/index.ts';
import { requireOtherOwner } from '../roles/owner-rule.ts';
import { expand, incompatiblePair, permissionsOfSet, type RoleGraph } from '../roles/role-graph.ts';
import {
  deleteOrgAssignmentsOfUser,
  findAssignableRoles,
  insertMembershipAssignment,
  leaveOrgGroups,
  orgRoleIdsOfUser,
  setMembershipState,
} from './memberships.repo.ts';
import { revokeOrganizationGrants } from './organization-revocation.ts';
import { lockOrganization } from './organizations.repo.ts';
import type { MembershipRow, OrganizationRow, OrgCall } from './organizations.types.ts';

/** The organization, locked; deleted ones are not found. */
export async function requireOrganization(tx: Tx, call: OrgCall, orgId: string): Promise<OrganizationRow> {
  const org = await lockOrganization(tx, call.realmId, orgId);
  if (!org) throw problem.notFound('no such organization');
  return org;
}

/** Active and not past expires_at: the TypeScript twin of liveMembershipSql. */
export const isLiveMembership = (m: { state: string; expires_at: Date | null }, now: Date): boolean =>
  m.state === 'active' && (m.expires_at === null || new Date(m.expires_at).getTime() > now.getTime());

/** An organization being deleted accepts no change (doc 2, Organization deletion). */
export function requireChangeable(org: OrganizationRow): void {
  if (org.state === 'deleting') throw problem.conflict('the organization is being deleted');
}

/** New members join active organizations only. */
export function requireActive(org: OrganizationRow): void {
  requireChangeable(org);
  if (org.state !== 'active') throw problem.conflict(`the organization is ${org.state}`);
}

/** A user a body names must exist (422 otherwise, as for any invalid reference in a body). */
export async function requireUser(
  tx: Tx,
  realmId: string,
  userId: string,
  field: string,
  activeOnly = false,
): Promise<void> {
  const user = await maybeOne<{ state: string }>(
    tx,
    `select state from users where realm_id = $1 and id = $2 and state <> 'deleted'`,
    [realmId, userId],
  );
  if (!user) throw problem.validation([{ field, code: 'unknown_user', detail: 'no such user' }]);
  if (activeOnly && user.state !== 'active')
    throw problem.validation([{ field, code: 'user_not_active', detail: `the user is ${user.state}` }]);
}

/** What the caller holds inside the organization (realm scope included), read live. */
export async function callerAuthorityIn(tx: Tx, call: OrgCall, orgId: string): Promise<CallerAuthority> {
  if (call.caller === null) throw new Error('the delegation ceiling needs an authenticated caller');
  return callerAuthority(tx, call.realmId, call.caller, { orgId, projectId: null }, call.now);
}

const roleNames = (graph: RoleGraph, pair: [string, string]) =>
  pair.map((id) => graph.get(id)?.name ?? id).join(' and ');

/**
 * Roles named for a membership of `userId`: organization-scope roles of the realm or of this
 * organization (422 otherwise). Expanded through composites, they may not contain two roles that
 * exclude each other, nor one excluded by what the user holds in the organization already
 * (409 incompatible_roles, as on /role-assignments). With `ceiling`, the caller must hold every
 * permission they grant, application permissions included (403; docs/api-roles.md, Delegation
 * ceiling), so an organization admin cannot make anyone an owner, not even through a composite.
 */
export async function checkAssignableRoles(
  tx: Tx,
  call: OrgCall,
  orgId: string,
  roleIds: readonly string[],
  o: { userId: string; ceiling: boolean; field?: string },
): Promise<void> {
  if (roleIds.length === 0) return;
  const field = o.field ?? 'role_ids';
  const found = await findAssignableRoles(tx, call.realmId, orgId, roleIds);
  const known = new Set(found.map((r) => r.id));
  const missing = roleIds.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw problem.validation(
      missing.map((id) => ({
        field,
        code: 'unknown_role',
        detail: `${id} is not an organization role of this organization`,
      })),
    );
  }
  const graph = await loadRoleGraph(tx, call.realmId);
  const granted = expand(graph, roleIds);
  if (o.ceiling)
    ensureWithinCeiling(await callerAuthorityIn(tx, call, orgId), permissionsOfSet(graph, granted));
  const scope = { type: 'organization', id: orgId };
  const held = expand(
    graph,
    await heldRoleIds(tx, call.realmId, { type: 'user', id: o.userId }, scope, call.now),
  );
  const pair = incompatiblePair(graph, granted, granted) ?? incompatiblePair(graph, granted, held);
  if (pair)
    throw roleProblem.incompatible(`${roleNames(graph, pair)} cannot be held together in this organization`);
}

/**
 * Acting on someone's membership (suspend, remove) needs the caller to hold everything the member
 * holds in the organization, through the membership or directly (403), so an admin cannot act
 * against an owner.
 */
export async function requireAboveMember(tx: Tx, call: OrgCall, m: MembershipRow): Promise<void> {
  const roles = await orgRoleIdsOfUser(tx, call.realmId, m.organization_id, m.user_id, call.now);
  if (roles.length === 0) return;
  const graph = await loadRoleGraph(tx, call.realmId);
  const authority = await callerAuthorityIn(tx, call, m.organization_id);
  try {
    ensureWithinCeiling(authority, permissionsOfSet(graph, expand(graph, roles)));
  } catch {
    throw problem.forbidden('the member holds permissions in the organization that you do not hold');
  }
}

/** Assigns roles at organization scope, held through the membership; one event per assignment. */
export async function assignThroughMembership(
  tx: Tx,
  call: OrgCall,
  m: MembershipRow,
  roleIds: readonly string[],
  source: string,
  reason: string | null = null,
): Promise<{ roleId: string; assignmentId: string }[]> {
  const record = recorder(tx, call);
  const out: { roleId: string; assignmentId: string }[] = [];
  for (const roleId of roleIds) {
    const assignmentId = await insertMembershipAssignment(
      tx,
      call.realmId,
      { orgId: m.organization_id, membershipId: m.id, userId: m.user_id, roleId, source, reason },
      call.now,
    );
    // Held already: nothing is assigned, so nothing is announced.
    if (assignmentId === null) continue;
    await record.event(
      'authorization.role.assigned',
      { subject_id: m.user_id, role_id: roleId, assignment_id: assignmentId },
      m.organization_id,
    );
    out.push({ roleId, assignmentId });
  }
  return out;
}

export const requireNotLastOwner = (tx: Tx, call: OrgCall, m: MembershipRow): Promise<void> =>
  requireOtherOwner(tx, call.realmId, m.organization_id, m.user_id, call.now);

/**
 * Deletes every organization-scope role assignment of the user in the organization and their
 * places in its groups, so nothing comes back with a later membership. The caller moves the
 * authorization revision.
 */
export async function dropOrgHoldings(
  tx: Tx,
  call: OrgCall,
  orgId: string,
  userId: string,
  unassignEvents: boolean,
): Promise<void> {
  const record = recorder(tx, call);
  const removed = await deleteOrgAssignmentsOfUser(tx, call.realmId, orgId, userId);
  if (unassignEvents) {
    for (const a of removed) {
      await record.event('authorization.role.unassigned', { subject_id: userId, role_id: a.role_id }, orgId);
    }
  }
  await leaveOrgGroups(tx, call.realmId, orgId, userId);
}

export interface EndOptions {
  state: 'removed' | 'expired' | 'suspended';
  endedReason: string;
  /** authorization.role.unassigned per deleted assignment (membership expiry emits no event). */
  unassignEvents: boolean;
}

/**
 * Suspends, removes or expires a membership: its grants in the organization are revoked at once;
 * removal and expiry also drop what the user held in the organization. What the user may do changes.
 */
export async function endMembership(
  tx: Tx,
  call: OrgCall,
  m: MembershipRow,
  o: EndOptions,
): Promise<MembershipRow> {
  const updated = await setMembershipState(
    tx,
    call.realmId,
    m.id,
    { state: o.state, ...(o.state === 'suspended' ? {} : { endedReason: o.endedReason }) },
    call.now,
  );
  if (o.state !== 'suspended')
    await dropOrgHoldings(tx, call, m.organization_id, m.user_id, o.unassignEvents);
  await revokeOrganizationGrants(
    tx,
    call.realmId,
    m.organization_id,
    `membership_${o.state}`,
    call.now,
    m.user_id,
  );
  await authorizationChanged(tx, call.realmId, [{ type: 'user', id: m.user_id }]);
  return updated;
}
