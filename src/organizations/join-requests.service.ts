// Join requests (spec doc 2, Organization membership: pending_approval, 14 days).
//
//   file    -> membership pending_approval + request pending (organization.join_request.created)
//   pending --approve-->  approved;  membership active, source join_request (no event: doc 2 lists
//                                    memberships from join-request approval among the silent changes)
//   pending --deny-->     denied;    membership removed
//   pending --withdraw--> withdrawn; membership removed
//   pending --sweep-->    expired;   membership removed (membership-expiry.task.ts)
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { listPendingForUser } from './membership-requests.repo.ts';
import {
  acceptRequest,
  endOpenRequest,
  endOwnRequest,
  lockOpenOrgRequest,
  lockOrgRequest,
  openRequest,
} from './membership-requests.ts';
import { checkAssignableRoles, requireActive, requireOrganization } from './membership-rules.ts';
import { mailMember, type OrgMail } from './org-mail.ts';
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
    return openRequest(tx, call, {
      kind: 'join_request',
      orgId: org.id,
      userId,
      roleIds: [],
      requestedBy: userId,
      message: null,
      ttlMs: JOIN_REQUEST_TTL_MS,
      alreadyMember: 'you already have a membership of this organization',
    });
  });
}

export const listMyJoinRequests = (db: Db, realmId: string, userId: string, now: Date) =>
  listPendingForUser(db, realmId, userId, 'join_request', now);

export async function withdrawJoinRequest(db: Db, call: OrgCall, id: string): Promise<RequestRow> {
  return endOwnRequest(db, call, 'join_request', id, {
    outcome: 'withdrawn',
    audit: 'organization.join_request.withdrawn',
  });
}

export async function approveJoinRequest(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  roleIds: readonly string[],
  mail?: OrgMail,
): Promise<MembershipView> {
  return db.tx(async (tx) => {
    const { org, r } = await lockOpenOrgRequest(tx, call, orgId, 'join_request', id);
    await checkAssignableRoles(tx, call, org.id, roleIds, { userId: r.user_id, ceiling: true });
    await mailMember(
      tx,
      mail,
      call.realmId,
      org.id,
      r.user_id,
      'join_request_decision',
      { organization: org.display_name, decision: 'approved' },
      call.now,
    );
    return acceptRequest(tx, call, r, {
      outcome: 'approved',
      decidedBy: call.actor.id,
      audit: 'organization.join_request.approved',
      roleIds,
    });
  });
}

export async function denyJoinRequest(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  reason: string | null,
  mail?: OrgMail,
): Promise<RequestRow> {
  return db.tx(async (tx) => {
    // A request no longer open makes endOpenRequest refuse, and the mail goes with the rollback.
    const { org, r } = await lockOrgRequest(tx, call, orgId, 'join_request', id);
    await mailMember(
      tx,
      mail,
      call.realmId,
      org.id,
      r.user_id,
      'join_request_decision',
      { organization: org.display_name, decision: 'denied' },
      call.now,
    );
    return endOpenRequest(tx, call, r, {
      outcome: 'denied',
      audit: 'organization.join_request.denied',
      reason,
      decidedBy: call.actor.id,
    });
  });
}
