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
import { authorizationChanged } from '../authz/authz-revision.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import {
  decideRequest,
  insertRequest,
  listOrgRequests,
  listPendingForUser,
  lockRequest,
  recordResend,
} from './membership-requests.repo.ts';
import {
  assignThroughMembership,
  checkAssignableRoles,
  requireActive,
  requireOrganization,
  requireUser,
} from './membership-rules.ts';
import {
  findAssignableRoles,
  findLiveMembership,
  insertMembership,
  setMembershipState,
} from './memberships.repo.ts';
import { membershipView } from './memberships.service.ts';
import { auditOrg, orgEvent } from './org-records.ts';
import type { InvitationInput } from './organizations.decode.ts';
import type { MembershipView } from './organizations.present.ts';
import { findOrganization } from './organizations.repo.ts';
import type { OrganizationRow, OrgCall, Page, RequestRow } from './organizations.types.ts';

export interface InvitationLimits {
  ttlMs: number;
  resends: number;
}

async function invite(
  tx: Tx,
  call: OrgCall,
  org: OrganizationRow,
  userId: string,
  roleIds: readonly string[],
  message: string | null,
  ttlMs: number,
): Promise<RequestRow> {
  await requireUser(tx, call.realmId, userId, 'user_id');
  if (await findLiveMembership(tx, call.realmId, org.id, userId))
    throw problem.conflict('the user already has a membership of this organization');
  const m = await insertMembership(
    tx,
    call.realmId,
    { orgId: org.id, userId, state: 'invited', source: 'invitation' },
    call.now,
  );
  const r = await insertRequest(
    tx,
    call.realmId,
    {
      kind: 'invitation',
      membershipId: m.id,
      orgId: org.id,
      userId,
      roleIds,
      requestedBy: call.actor.id,
      message,
      expiresAt: new Date(call.now.getTime() + ttlMs),
    },
    call.now,
  );
  await orgEvent(tx, call, org.id, 'organization.invitation.created', { invitation_id: r.id });
  await auditOrg(tx, call, 'organization.invitation.created', org.id, {
    subject: { type: 'user', id: userId },
    data: { invitation_id: r.id, membership_id: m.id, role_ids: roleIds },
  });
  return r;
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
    await checkAssignableRoles(tx, call, org.id, roleIds);
    return invite(tx, call, org, input.userId, roleIds, input.message ?? null, limits.ttlMs);
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
  const rows = await listOrgRequests(db, realmId, orgId, kind, { ...q, limit: q.limit + 1 });
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return { items: page, nextAfter: rows.length > q.limit && last ? last.id : null };
}

/** A request still open: pending and not past its expiry. */
export function requireOpen(r: RequestRow, now: Date, what: string): void {
  if (r.state !== 'pending') throw problem.conflict(`the ${what} is ${r.state}`);
  if (new Date(r.expires_at).getTime() <= now.getTime()) throw problem.conflict(`the ${what} expired`);
}

/** The organization's invitation, locked; another organization's is not found. */
async function lockOrgInvitation(tx: Tx, call: OrgCall, orgId: string, id: string) {
  const org = await requireOrganization(tx, call, orgId);
  const r = await lockRequest(tx, call.realmId, 'invitation', id);
  if (!r || r.organization_id !== org.id) throw problem.notFound('no such invitation');
  return { org, r };
}

export async function resendInvitation(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  limits: InvitationLimits,
): Promise<RequestRow> {
  return db.tx(async (tx) => {
    const { org, r } = await lockOrgInvitation(tx, call, orgId, id);
    requireActive(org);
    requireOpen(r, call.now, 'invitation');
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
    await auditOrg(tx, call, 'organization.invitation.resent', org.id, {
      subject: { type: 'user', id: r.user_id },
      data: { invitation_id: r.id, resend_count: updated.resend_count },
    });
    return updated;
  });
}

/** Ends the request and removes the membership behind it; no membership event (it never was active). */
export async function closeRequest(
  tx: Tx,
  call: OrgCall,
  r: RequestRow,
  outcome: 'declined' | 'revoked' | 'reassigned' | 'denied' | 'withdrawn' | 'expired',
  decidedBy: string | null,
): Promise<RequestRow> {
  const closed = await decideRequest(tx, call.realmId, r.id, outcome, decidedBy, call.now);
  await setMembershipState(
    tx,
    call.realmId,
    r.membership_id,
    { state: 'removed', endedReason: `request_${outcome}` },
    call.now,
  );
  return closed;
}

export async function revokeInvitation(
  db: Db,
  call: OrgCall,
  orgId: string,
  id: string,
  reason: string | null,
): Promise<RequestRow> {
  return db.tx(async (tx) => {
    const { org, r } = await lockOrgInvitation(tx, call, orgId, id);
    requireOpen(r, call.now, 'invitation');
    const closed = await closeRequest(tx, call, r, 'revoked', call.actor.id);
    await auditOrg(tx, call, 'organization.invitation.revoked', org.id, {
      subject: { type: 'user', id: r.user_id },
      reason,
      data: { invitation_id: r.id, membership_id: r.membership_id },
    });
    return closed;
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
  return db.tx(async (tx) => {
    const { org, r } = await lockOrgInvitation(tx, call, orgId, id);
    requireActive(org);
    requireOpen(r, call.now, 'invitation');
    if (userId === r.user_id)
      throw problem.validation([
        { field: 'user_id', code: 'same_user', detail: 'the invitation is for this user already' },
      ]);
    await closeRequest(tx, call, r, 'reassigned', call.actor.id);
    const next = await invite(tx, call, org, userId, r.role_ids, r.message, limits.ttlMs);
    await auditOrg(tx, call, 'organization.invitation.reassigned', org.id, {
      subject: { type: 'user', id: r.user_id },
      data: { invitation_id: r.id, new_invitation_id: next.id, new_user_id: userId },
    });
    return next;
  });
}

// ---- the invited user (/me) ---------------------------------------------------------------------

export const listMyInvitations = (db: Db, realmId: string, userId: string, now: Date) =>
  listPendingForUser(db, realmId, userId, 'invitation', now);

/** The caller's own invitation, locked; anyone else's is not found. */
async function lockMine(tx: Tx, call: OrgCall, id: string): Promise<RequestRow> {
  const r = await lockRequest(tx, call.realmId, 'invitation', id);
  if (!r || r.user_id !== call.actor.id) throw problem.notFound('no such invitation');
  return r;
}

export async function acceptInvitation(db: Db, call: OrgCall, id: string): Promise<MembershipView> {
  return db.tx(async (tx) => {
    const r = await lockMine(tx, call, id);
    const org = await requireOrganization(tx, call, r.organization_id);
    requireOpen(r, call.now, 'invitation');
    requireActive(org);
    await decideRequest(tx, call.realmId, r.id, 'accepted', r.user_id, call.now);
    const m = await setMembershipState(
      tx,
      call.realmId,
      r.membership_id,
      { state: 'active', joined: true },
      call.now,
    );
    await orgEvent(tx, call, org.id, 'organization.membership.added', {
      user_id: m.user_id,
      membership_id: m.id,
      source: 'invitation',
    });
    // Roles removed or moved out of reach since the invitation was sent are skipped.
    const assignable = await findAssignableRoles(tx, call.realmId, org.id, r.role_ids);
    const roleIds = r.role_ids.filter((rid) => assignable.some((a) => a.id === rid));
    await assignThroughMembership(tx, call, m, roleIds, 'invitation');
    await authorizationChanged(tx, call.realmId, [{ type: 'user', id: m.user_id }]);
    await auditOrg(tx, call, 'organization.invitation.accepted', org.id, {
      subject: { type: 'user', id: m.user_id },
      data: { invitation_id: r.id, membership_id: m.id, role_ids: roleIds },
    });
    return membershipView(tx, call.realmId, m);
  });
}

export async function declineInvitation(db: Db, call: OrgCall, id: string): Promise<RequestRow> {
  return db.tx(async (tx) => {
    const r = await lockMine(tx, call, id);
    requireOpen(r, call.now, 'invitation');
    const closed = await closeRequest(tx, call, r, 'declined', r.user_id);
    await auditOrg(tx, call, 'organization.invitation.declined', r.organization_id, {
      subject: { type: 'user', id: r.user_id },
      data: { invitation_id: r.id, membership_id: r.membership_id },
    });
    return closed;
  });
}
