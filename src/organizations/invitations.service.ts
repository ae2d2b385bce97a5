// Invitations (spec doc 2, Organization membership: invited; doc 1, Limits: invitation 72 h;
// doc 2, Limits: limits.invitation_resends).
//
//   invite  -> membership invited + request pending (organization.invitation.created)
//   pending --accept-->   accepted;   membership active (organization.membership.added)
//   pending --decline-->  declined;   membership removed
//   pending --revoke-->   revoked;    membership removed
//   pending --reassign--> reassigned; membership removed, a new invitation for another user
//   pending --sweep-->    expired;    membership removed (membership-expiry.task.ts)
//
// A pending invitation past expires_at counts as expired before the sweep records it.
import { inChange } from '../audit/index.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { cutPage } from '../platform/http/keyset.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { listOrgRequests, listPendingForUser, recordResend } from './membership-requests.repo.ts';
import {
  acceptRequest,
  closeRequest,
  endOrgRequest,
  endOwnRequest,
  lockOpenOrgRequest,
  lockOwnRequest,
  openRequest,
  requireOpen,
} from './membership-requests.ts';
import { checkAssignableRoles, requireActive, requireOrganization, requireUser } from './membership-rules.ts';
import { findAssignableRoles } from './memberships.repo.ts';
import { mailMember, type OrgMail } from './org-mail.ts';
import { auditOrg } from './org-records.ts';
import type { InvitationInput } from './organizations.decode.ts';
import type { MembershipView } from './organizations.present.ts';
import { findOrganization } from './organizations.repo.ts';
import type { OrganizationRow, OrgCall, Page, RequestRow } from './organizations.types.ts';

/** The invitation's roles that still exist and are assignable in the organization. */
async function stillAssignable(tx: Tx, call: OrgCall, orgId: string, roleIds: readonly string[]) {
  const assignable = await findAssignableRoles(tx, call.realmId, orgId, roleIds);
  return roleIds.filter((rid) => assignable.some((a) => a.id === rid));
}

export interface InvitationLimits {
  ttlMs: number;
  resends: number;
  /** Mails the invited user; absent without a mail transport. */
  mail?: OrgMail;
}

async function invite(
  tx: Tx,
  call: OrgCall,
  org: OrganizationRow,
  userId: string,
  roleIds: readonly string[],
  message: string | null,
  limits: InvitationLimits,
): Promise<RequestRow> {
  await requireUser(tx, call.realmId, userId, 'user_id');
  const opened = await openRequest(tx, call, {
    kind: 'invitation',
    orgId: org.id,
    userId,
    roleIds,
    requestedBy: call.actor.id,
    message,
    ttlMs: limits.ttlMs,
    alreadyMember: 'the user already has a membership of this organization',
  });
  await mailMember(
    tx,
    limits.mail,
    call.realmId,
    org.id,
    userId,
    'invitation',
    { organization: org.display_name },
    call.now,
  );
  return opened;
}

export async function createInvitation(
  db: Db,
  call: OrgCall,
  orgId: string,
  input: InvitationInput,
  limits: InvitationLimits,
): Promise<RequestRow> {
  return db.tx(async (tx) => {
    const org = await requireOrganization(tx, call, orgId);
    requireActive(org);
    const roleIds = input.roleIds ?? [];
    await checkAssignableRoles(tx, call, org.id, roleIds, { userId: input.userId, ceiling: true });
    return invite(tx, call, org, input.userId, roleIds, input.message ?? null, limits);
  });
}

export async function listInvitationPage(
  db: Db,
  realmId: string,
  orgId: string,
  kind: 'invitation' | 'join_request',
  q: { after: string | null; limit: number; state: string | null },
): Promise<Page<RequestRow>> {
  if (!(await findOrganization(db, realmId, orgId))) throw problem.notFound('no such organization');
  return cutPage(await listOrgRequests(db, realmId, orgId, kind, { ...q, limit: q.limit + 1 }), q.limit);
}

export async function resendInvitation(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  limits: InvitationLimits,
): Promise<RequestRow> {
  return inChange(db, call, async (tx, record) => {
    const { org, r } = await lockOpenOrgRequest(tx, call, orgId, 'invitation', id);
    if (r.resend_count >= limits.resends) {
      throw new Problem(
        409,
        'invitation_resend_limit',
        `an invitation is resent at most ${limits.resends} times`,
      );
    }
    const updated = await recordResend(
      tx,
      call.realmId,
      r.id,
      new Date(call.now.getTime() + limits.ttlMs),
      call.now,
    );
    await mailMember(
      tx,
      limits.mail,
      call.realmId,
      org.id,
      r.user_id,
      'invitation',
      { organization: org.display_name },
      call.now,
    );
    await auditOrg(record, 'organization.invitation.resent', org.id, {
      subject: { type: 'user', id: r.user_id },
      data: { invitation_id: r.id, resend_count: updated.resend_count },
    });
    return updated;
  });
}

export async function revokeInvitation(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  reason: string | null,
): Promise<RequestRow> {
  return endOrgRequest(db, call, orgId, 'invitation', id, {
    outcome: 'revoked',
    audit: 'organization.invitation.revoked',
    reason,
  });
}

export async function reassignInvitation(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  userId: string,
  limits: InvitationLimits,
): Promise<RequestRow> {
  return inChange(db, call, async (tx, record) => {
    const { org, r } = await lockOpenOrgRequest(tx, call, orgId, 'invitation', id);
    if (userId === r.user_id)
      throw problem.validation([
        { field: 'user_id', code: 'same_user', detail: 'the invitation is for this user already' },
      ]);
    // Whoever reassigns becomes the inviter: the roles still assignable must be within their ceiling.
    const roleIds = await stillAssignable(tx, call, org.id, r.role_ids);
    await checkAssignableRoles(tx, call, org.id, roleIds, { userId, ceiling: true });
    await closeRequest(tx, call, r, 'reassigned', call.actor.id);
    const next = await invite(tx, call, org, userId, roleIds, r.message, limits);
    await auditOrg(record, 'organization.invitation.reassigned', org.id, {
      subject: { type: 'user', id: r.user_id },
      data: { invitation_id: r.id, new_invitation_id: next.id, new_user_id: userId },
    });
    return next;
  });
}

// ---- the invited user (/me) ---------------------------------------------------------------------

export const listMyInvitations = (db: Db, realmId: string, userId: string, now: Date) =>
  listPendingForUser(db, realmId, userId, 'invitation', now);

export async function acceptInvitation(db: Db, call: OrgCall, id: string): Promise<MembershipView> {
  return db.tx(async (tx) => {
    const { org, r } = await lockOwnRequest(tx, call, 'invitation', id);
    requireOpen(r, call.now);
    requireActive(org);
    // Roles removed or moved out of reach since the invitation was sent are skipped. The ceiling
    // was the inviter's, checked when inviting; what the user holds now may still exclude a role.
    const roleIds = await stillAssignable(tx, call, org.id, r.role_ids);
    await checkAssignableRoles(tx, call, org.id, roleIds, { userId: r.user_id, ceiling: false });
    return acceptRequest(tx, call, r, {
      outcome: 'accepted',
      decidedBy: r.user_id,
      audit: 'organization.invitation.accepted',
      roleIds,
    });
  });
}

export async function declineInvitation(db: Db, call: OrgCall, id: string): Promise<RequestRow> {
  return endOwnRequest(db, call, 'invitation', id, {
    outcome: 'declined',
    audit: 'organization.invitation.declined',
  });
}
