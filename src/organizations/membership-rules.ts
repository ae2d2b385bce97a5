// Rules every membership use case shares: which organizations accept changes, which users and
// roles may be named, the delegation ceiling, assigning roles through a membership and ending a
// membership (doc 2, Organization membership: only active memberships count anywhere).
import { authorizationChanged } from '../authz/authz-revision.ts';
import { permissionsOfRole } from '../authz/effective-roles.ts';
import { maybeOne, type Tx } from '../platform/db/db.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import {
  countOtherActiveOwners,
  deleteMembershipAssignments,
  findAssignableRoles,
  insertMembershipAssignment,
  ownerRoleId,
  setMembershipState,
} from './memberships.repo.ts';
import { orgEvent } from './org-records.ts';
import { revokeOrganizationGrants } from './organization-revocation.ts';
import { lockOrganization } from './organizations.repo.ts';
import type { MembershipRow, OrganizationRow, OrgCall } from './organizations.types.ts';

/** The organization, locked; deleted ones are not found. */
export async function requireOrganization(tx: Tx, call: OrgCall, orgId: string): Promise<OrganizationRow> {
  const org = await lockOrganization(tx, call.realmId, orgId);
  if (!org) throw problem.notFound('no such organization');
  return org;
}

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

/**
 * Roles named for a membership: organization-scope roles of the realm or of this organization
 * (422 otherwise). Delegation ceiling: a caller cannot hand out an organization permission it
 * does not hold itself (403), so an organization admin cannot make someone an owner.
 */
export async function checkAssignableRoles(
  tx: Tx,
  call: OrgCall,
  orgId: string,
  roleIds: readonly string[],
  field = 'role_ids',
): Promise<void> {
  if (roleIds.length === 0) return;
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
  for (const role of found) {
    const beyond = permissionsOfRole(role).filter((p) => p.startsWith('org.') && !call.permissions.has(p));
    if (beyond.length > 0) throw problem.forbidden(`assigning role ${role.name} needs ${beyond.join(', ')}`);
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
  const out: { roleId: string; assignmentId: string }[] = [];
  for (const roleId of roleIds) {
    const assignmentId = await insertMembershipAssignment(
      tx,
      call.realmId,
      { orgId: m.organization_id, membershipId: m.id, userId: m.user_id, roleId, source, reason },
      call.now,
    );
    await orgEvent(tx, call, m.organization_id, 'authorization.role.assigned', {
      subject_id: m.user_id,
      role_id: roleId,
      assignment_id: assignmentId,
    });
    out.push({ roleId, assignmentId });
  }
  return out;
}

/**
 * Decision (docs/api-organizations.md): an organization keeps at least one active owner, so
 * suspending or removing the last active membership that holds `owner` is a conflict.
 */
export async function requireNotLastOwner(tx: Tx, call: OrgCall, m: MembershipRow): Promise<void> {
  if (m.state !== 'active') return;
  const owner = await ownerRoleId(tx, call.realmId);
  const holds = await maybeOne(
    tx,
    `select 1 from role_assignments where realm_id = $1 and role_id = $2 and subject_type = 'user'
        and subject_id = $3 and scope_type = 'organization' and scope_id = $4`,
    [call.realmId, owner, m.user_id, m.organization_id],
  );
  if (!holds) return;
  if ((await countOtherActiveOwners(tx, call.realmId, m.organization_id, owner, m.id)) === 0) {
    throw new Problem(409, 'last_owner', 'the organization would have no active owner left');
  }
}

export interface EndOptions {
  state: 'removed' | 'expired' | 'suspended';
  endedReason: string;
  /** authorization.role.unassigned per deleted assignment (membership expiry emits no event). */
  unassignEvents: boolean;
}

/**
 * Suspends, removes or expires a membership: its grants in the organization are revoked at once;
 * removal and expiry also delete the roles held through it. What the user may do changes.
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
  if (o.state !== 'suspended') {
    const removed = await deleteMembershipAssignments(tx, call.realmId, m.id);
    if (o.unassignEvents) {
      for (const a of removed) {
        await orgEvent(tx, call, m.organization_id, 'authorization.role.unassigned', {
          subject_id: m.user_id,
          role_id: a.role_id,
        });
      }
    }
  }
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
