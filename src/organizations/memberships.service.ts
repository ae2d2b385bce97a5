// Administration of memberships (spec doc 2, Organization membership) and ownership transfer
// (doc 1, Recovery and account administration).
//
//   (none)            --add-->        active      organization.membership.added
//   active            --suspend-->    suspended   grants in the organization revoked at once
//   suspended         --reactivate--> active
//   invited | pending_approval | active | suspended --remove--> removed (roles through it deleted)
//
// Invitations and join requests move invited and pending_approval (membership-requests.service.ts);
// the worker sweep moves active to expired (membership-expiry.task.ts).

import { inChange, recorder } from '../audit/index.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { cutPage } from '../platform/http/keyset.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { ensureWithinCeiling } from '../roles/delegation.ts';
import { ownerRoleId } from '../roles/owner-rule.ts';
import { BUILTIN_ROLES } from '../roles/permissions.ts';
import { decideRequest, lockPendingRequestOf } from './membership-requests.repo.ts';
import {
  assignThroughMembership,
  callerAuthorityIn,
  checkAssignableRoles,
  endMembership,
  isLiveMembership,
  requireAboveMember,
  requireActive,
  requireChangeable,
  requireNotLastOwner,
  requireOrganization,
  requireUser,
} from './membership-rules.ts';
import {
  findLiveMembership,
  findMembership,
  findOrgAssignment,
  insertMembership,
  listMemberships,
  lockMembership,
  membershipRoles,
  setMembershipState,
} from './memberships.repo.ts';
import { auditOrg } from './org-records.ts';
import type { AddMemberInput } from './organizations.decode.ts';
import type { MembershipView } from './organizations.present.ts';
import { findOrganization } from './organizations.repo.ts';
import type { MembershipRow, OrgCall, Page } from './organizations.types.ts';

export async function membershipViews(
  q: Queryable,
  realmId: string,
  rows: MembershipRow[],
): Promise<MembershipView[]> {
  const roles =
    rows.length === 0
      ? []
      : await membershipRoles(
          q,
          realmId,
          rows.map((m) => m.id),
        );
  return rows.map((membership) => ({
    membership,
    roles: roles.filter((r) => r.membership_id === membership.id),
  }));
}

export async function membershipView(
  q: Queryable,
  realmId: string,
  m: MembershipRow,
): Promise<MembershipView> {
  const [view] = await membershipViews(q, realmId, [m]);
  return view as MembershipView;
}

export async function listMemberPage(
  db: Db,
  realmId: string,
  orgId: string,
  q: { after: string | null; limit: number; state: string | null },
): Promise<Page<MembershipView>> {
  if (!(await findOrganization(db, realmId, orgId))) throw problem.notFound('no such organization');
  const page = cutPage(await listMemberships(db, realmId, orgId, { ...q, limit: q.limit + 1 }), q.limit);
  return { items: await membershipViews(db, realmId, page.items), nextAfter: page.nextAfter };
}

export async function readMember(
  db: Db,
  realmId: string,
  orgId: string,
  membershipId: string,
): Promise<MembershipView> {
  const m = await findMembership(db, realmId, orgId, membershipId);
  if (!m || !(await findOrganization(db, realmId, orgId))) throw problem.notFound('no such membership');
  return membershipView(db, realmId, m);
}

export async function addMember(
  db: Db,
  call: OrgCall,
  orgId: string,
  input: AddMemberInput,
): Promise<MembershipView> {
  return inChange(db, call, async (tx, record) => {
    const org = await requireOrganization(tx, call, orgId);
    requireActive(org);
    await requireUser(tx, call.realmId, input.userId, 'user_id');
    if (input.expiresAt !== undefined && input.expiresAt.getTime() <= call.now.getTime())
      throw problem.validation([
        { field: 'expires_at', code: 'not_in_future', detail: 'must lie in the future' },
      ]);
    const roleIds = input.roleIds ?? [];
    await checkAssignableRoles(tx, call, org.id, roleIds, { userId: input.userId, ceiling: true });
    if (await findLiveMembership(tx, call.realmId, org.id, input.userId))
      throw problem.conflict('the user already has a membership of this organization');
    const m = await insertMembership(
      tx,
      call.realmId,
      {
        orgId: org.id,
        userId: input.userId,
        state: 'active',
        source: 'admin',
        externalId: input.externalId ?? null,
        metadata: input.metadata ?? {},
        expiresAt: input.expiresAt ?? null,
      },
      call.now,
    );
    await record.event(
      'organization.membership.added',
      { user_id: m.user_id, membership_id: m.id, source: 'admin' },
      org.id,
    );
    await assignThroughMembership(tx, call, m, roleIds, 'admin');
    await authorizationChanged(tx, call.realmId, [{ type: 'user', id: m.user_id }]);
    await auditOrg(record, 'organization.membership.added', org.id, {
      subject: { type: 'user', id: m.user_id },
      data: { membership_id: m.id, source: 'admin', role_ids: roleIds },
    });
    return membershipView(tx, call.realmId, m);
  });
}

export type MemberChange = 'suspend' | 'reactivate' | 'remove';

const pastExpiry = (m: MembershipRow, now: Date): boolean =>
  m.expires_at !== null && new Date(m.expires_at).getTime() <= now.getTime();

/**
 * Decision (docs/api-organizations.md): reactivating a suspended membership whose expires_at has
 * passed records it as expired, as the sweep would have, and answers 409 membership_not_active.
 */
async function expireInstead(tx: Tx, call: OrgCall, m: MembershipRow): Promise<void> {
  await endMembership(tx, call, m, { state: 'expired', endedReason: 'expired', unassignEvents: false });
  await auditOrg(recorder(tx, call), 'organization.membership.expired', m.organization_id, {
    subject: { type: 'user', id: m.user_id },
    data: { membership_id: m.id, expires_at: new Date(m.expires_at as Date).toISOString() },
  });
}

export async function changeMember(
  db: Db,
  call: OrgCall,
  orgId: string,
  membershipId: string,
  change: MemberChange,
  reason: string | null,
): Promise<MembershipView> {
  const outcome = await inChange(db, call, async (tx, record): Promise<MembershipView | 'expired'> => {
    const org = await requireOrganization(tx, call, orgId);
    requireChangeable(org);
    const m = await lockMembership(tx, call.realmId, org.id, membershipId);
    if (!m) throw problem.notFound('no such membership');
    const allowed: Record<MemberChange, readonly string[]> = {
      suspend: ['active'],
      reactivate: ['suspended'],
      remove: ['invited', 'pending_approval', 'active', 'suspended'],
    };
    if (!allowed[change].includes(m.state))
      throw problem.conflict(`cannot ${change} a membership that is ${m.state}`);
    if (change === 'reactivate' && pastExpiry(m, call.now)) {
      await expireInstead(tx, call, m);
      return 'expired';
    }
    if (change !== 'reactivate') {
      await requireAboveMember(tx, call, m);
      await requireNotLastOwner(tx, call, m);
    }

    let updated: MembershipRow;
    if (change === 'reactivate') {
      updated = await setMembershipState(tx, call.realmId, m.id, { state: 'active' }, call.now);
      await authorizationChanged(tx, call.realmId, [{ type: 'user', id: m.user_id }]);
    } else {
      // An invitation or join request behind the membership ends with it.
      const pending = await lockPendingRequestOf(tx, call.realmId, m.id);
      if (pending) {
        const outcome = pending.kind === 'invitation' ? 'revoked' : 'denied';
        await decideRequest(tx, call.realmId, pending.id, outcome, call.actor.id, call.now);
      }
      updated = await endMembership(tx, call, m, {
        state: change === 'suspend' ? 'suspended' : 'removed',
        endedReason: 'administrator_removed',
        unassignEvents: true,
      });
    }
    const data = {
      user_id: m.user_id,
      membership_id: m.id,
      authorization_revision: updated.authorization_revision,
    };
    // A membership that never became active ends with its request: no membership event.
    const wasMember = m.state === 'active' || m.state === 'suspended';
    if (change === 'suspend') await record.event('organization.membership.suspended', data, org.id);
    else if (change === 'reactivate') await record.event('organization.membership.reactivated', data, org.id);
    else if (wasMember) await record.event('organization.membership.removed', data, org.id);
    const audit = {
      suspend: 'organization.membership.suspended',
      reactivate: 'organization.membership.reactivated',
      remove: 'organization.membership.removed',
    } as const;
    await auditOrg(record, audit[change], org.id, {
      subject: { type: 'user', id: m.user_id },
      reason,
      data: { membership_id: m.id, from: m.state, state: updated.state },
    });
    return membershipView(tx, call.realmId, updated);
  });
  if (outcome === 'expired')
    throw new Problem(
      409,
      'membership_not_active',
      'the membership passed its expires_at and is now expired',
    );
  return outcome;
}

/**
 * doc 1: ownership transfer makes an active member an owner (the built-in owner role at
 * organization scope, held through the membership). Earlier owners keep their role.
 */
export async function transferOwnership(
  db: Db,
  call: OrgCall,
  orgId: string,
  input: { userId: string; reason?: string },
): Promise<{ created: boolean; body: Record<string, string> }> {
  return inChange(db, call, async (tx, record) => {
    const org = await requireOrganization(tx, call, orgId);
    requireActive(org);
    const m = await findLiveMembership(tx, call.realmId, org.id, input.userId);
    if (!m || !isLiveMembership(m, call.now)) {
      throw new Problem(
        409,
        'membership_not_active',
        'the user has no active membership of this organization',
      );
    }
    // The owner role is handed out like any other: within the caller's ceiling.
    ensureWithinCeiling(await callerAuthorityIn(tx, call, org.id), BUILTIN_ROLES.orgOwner.permissions);
    const roleId = await ownerRoleId(tx, call.realmId);
    const body = { organization_id: org.id, user_id: m.user_id, role_id: roleId };
    const held = await findOrgAssignment(tx, call.realmId, org.id, m.user_id, roleId);
    if (held) return { created: false, body: { ...body, assignment_id: held.id } };
    const [assigned] = await assignThroughMembership(
      tx,
      call,
      m,
      [roleId],
      'ownership_transfer',
      input.reason ?? null,
    );
    const assignmentId = assigned?.assignmentId as string;
    const transferId = newId('otr', call.now.getTime());
    await authorizationChanged(tx, call.realmId, [{ type: 'user', id: m.user_id }]);
    await auditOrg(record, 'organization.ownership.transferred', org.id, {
      subject: { type: 'user', id: m.user_id },
      reason: input.reason ?? null,
      data: { transfer_id: transferId, membership_id: m.id, role_id: roleId, assignment_id: assignmentId },
    });
    return { created: true, body: { id: transferId, ...body, assignment_id: assignmentId } };
  });
}
