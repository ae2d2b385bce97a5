// Join requests (spec doc 2, Organization membership: pending_approval, 14 days).
//
//   file    -> membership pending_approval + request pending (organization.join_request.created)
//   pending --approve-->  approved;  membership active, source join_request (no event: doc 2 lists
//                                    memberships from join-request approval among the silent changes)
//   pending --deny-->     denied;    membership removed
//   pending --withdraw--> withdrawn; membership removed
//   pending --sweep-->    expired;   membership removed (membership-expiry.task.ts)
import { authorizationChanged } from '../authz/authz-revision.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { closeRequest, requireOpen } from './invitations.service.ts';
import { decideRequest, insertRequest, listPendingForUser, lockRequest } from './membership-requests.repo.ts';
import {
  assignThroughMembership,
  checkAssignableRoles,
  requireActive,
  requireOrganization,
} from './membership-rules.ts';
import { findLiveMembership, insertMembership, setMembershipState } from './memberships.repo.ts';
import { membershipView } from './memberships.service.ts';
import { auditOrg, orgEvent } from './org-records.ts';
import type { MembershipView } from './organizations.present.ts';
import { findOrganization } from './organizations.repo.ts';
import type { OrgCall, RequestRow } from './organizations.types.ts';

/** doc 2, Organization membership: a join request expires after 14 days. */
export const JOIN_REQUEST_TTL_MS = 14 * 24 * 3600_000;

export async function fileJoinRequest(db: Db, call: OrgCall, orgId: string): Promise<RequestRow> {
  const userId = call.actor.id as string;
  return db.tx(async (tx) => {
    const org = await findOrganization(tx, call.realmId, orgId);
    if (!org || org.state === 'deleting') throw problem.notFound('no such organization');
    const locked = await requireOrganization(tx, call, org.id);
    requireActive(locked);
    if (await findLiveMembership(tx, call.realmId, org.id, userId))
      throw problem.conflict('you already have a membership of this organization');
    const m = await insertMembership(
      tx,
      call.realmId,
      { orgId: org.id, userId, state: 'pending_approval', source: 'join_request' },
      call.now,
    );
    const r = await insertRequest(
      tx,
      call.realmId,
      {
        kind: 'join_request',
        membershipId: m.id,
        orgId: org.id,
        userId,
        roleIds: [],
        requestedBy: userId,
        message: null,
        expiresAt: new Date(call.now.getTime() + JOIN_REQUEST_TTL_MS),
      },
      call.now,
    );
    await orgEvent(tx, call, org.id, 'organization.join_request.created', { join_request_id: r.id });
    await auditOrg(tx, call, 'organization.join_request.created', org.id, {
      subject: { type: 'user', id: userId },
      data: { join_request_id: r.id, membership_id: m.id },
    });
    return r;
  });
}

export const listMyJoinRequests = (db: Db, realmId: string, userId: string, now: Date) =>
  listPendingForUser(db, realmId, userId, 'join_request', now);

export async function withdrawJoinRequest(db: Db, call: OrgCall, id: string): Promise<RequestRow> {
  return db.tx(async (tx) => {
    const r = await lockRequest(tx, call.realmId, 'join_request', id);
    if (!r || r.user_id !== call.actor.id) throw problem.notFound('no such join request');
    requireOpen(r, call.now, 'join request');
    const closed = await closeRequest(tx, call, r, 'withdrawn', r.user_id);
    await auditOrg(tx, call, 'organization.join_request.withdrawn', r.organization_id, {
      subject: { type: 'user', id: r.user_id },
      data: { join_request_id: r.id, membership_id: r.membership_id },
    });
    return closed;
  });
}

async function lockOrgJoinRequest(tx: Tx, call: OrgCall, orgId: string, id: string) {
  const org = await requireOrganization(tx, call, orgId);
  const r = await lockRequest(tx, call.realmId, 'join_request', id);
  if (!r || r.organization_id !== org.id) throw problem.notFound('no such join request');
  return { org, r };
}

export async function approveJoinRequest(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  roleIds: readonly string[],
): Promise<MembershipView> {
  return db.tx(async (tx) => {
    const { org, r } = await lockOrgJoinRequest(tx, call, orgId, id);
    requireActive(org);
    requireOpen(r, call.now, 'join request');
    await checkAssignableRoles(tx, call, org.id, roleIds);
    await decideRequest(tx, call.realmId, r.id, 'approved', call.actor.id, call.now);
    const m = await setMembershipState(
      tx,
      call.realmId,
      r.membership_id,
      { state: 'active', joined: true },
      call.now,
    );
    await assignThroughMembership(tx, call, m, roleIds, 'join_request');
    await authorizationChanged(tx, call.realmId, [{ type: 'user', id: m.user_id }]);
    await auditOrg(tx, call, 'organization.join_request.approved', org.id, {
      subject: { type: 'user', id: m.user_id },
      data: { join_request_id: r.id, membership_id: m.id, role_ids: roleIds },
    });
    return membershipView(tx, call.realmId, m);
  });
}

export async function denyJoinRequest(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  reason: string | null,
): Promise<RequestRow> {
  return db.tx(async (tx) => {
    const { org, r } = await lockOrgJoinRequest(tx, call, orgId, id);
    requireOpen(r, call.now, 'join request');
    const closed = await closeRequest(tx, call, r, 'denied', call.actor.id);
    await auditOrg(tx, call, 'organization.join_request.denied', org.id, {
      subject: { type: 'user', id: r.user_id },
      reason,
      data: { join_request_id: r.id, membership_id: r.membership_id },
    });
    return closed;
  });
}
