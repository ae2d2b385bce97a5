// What invitations and join requests share: each keeps a membership waiting (invited or
// pending_approval) that becomes active when the request is accepted and is removed when it ends
// any other way. The two kinds differ only in who may act and in what they announce.

import type { AuditType } from '../audit/audit.types.ts';
import { recorder } from '../audit/index.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { decideRequest, findRequest, insertRequest, lockRequest } from './membership-requests.repo.ts';
import {
  assignThroughMembership,
  dropOrgHoldings,
  requireActive,
  requireOrganization,
} from './membership-rules.ts';
import { findLiveMembership, insertMembership, setMembershipState } from './memberships.repo.ts';
import { membershipView } from './memberships.service.ts';
import { auditOrg } from './org-records.ts';
import type { MembershipView } from './organizations.present.ts';
import { lockOrganization } from './organizations.repo.ts';
import type { OrganizationRow, OrgCall, RequestKind, RequestRow } from './organizations.types.ts';

const NAME: Record<RequestKind, string> = { invitation: 'invitation', join_request: 'join request' };
const CREATED: Record<RequestKind, AuditType> = {
  invitation: 'organization.invitation.created',
  join_request: 'organization.join_request.created',
};

/** The member of audit data that names the request. */
export const requestRef = (r: Pick<RequestRow, 'kind' | 'id'>): Record<string, string> => ({
  [r.kind === 'invitation' ? 'invitation_id' : 'join_request_id']: r.id,
});

/** A request still open: pending and not past its expiry. */
export function requireOpen(r: RequestRow, now: Date): void {
  const what = NAME[r.kind];
  if (r.state !== 'pending') throw problem.conflict(`the ${what} is ${r.state}`);
  if (new Date(r.expires_at).getTime() <= now.getTime()) throw problem.conflict(`the ${what} expired`);
}

/** The organization's request, locked; another organization's is not found. */
export async function lockOrgRequest(
  tx: Tx,
  call: OrgCall,
  orgId: string,
  kind: RequestKind,
  id: string,
): Promise<{ org: OrganizationRow; r: RequestRow }> {
  const org = await requireOrganization(tx, call, orgId);
  const r = await lockRequest(tx, call.realmId, kind, id);
  if (!r || r.organization_id !== org.id) throw problem.notFound(`no such ${NAME[kind]}`);
  return { org, r };
}

/** The organization's request, locked, for a change that needs both still open. */
export async function lockOpenOrgRequest(
  tx: Tx,
  call: OrgCall,
  orgId: string,
  kind: RequestKind,
  id: string,
): Promise<{ org: OrganizationRow; r: RequestRow }> {
  const locked = await lockOrgRequest(tx, call, orgId, kind, id);
  requireActive(locked.org);
  requireOpen(locked.r, call.now);
  return locked;
}

/**
 * The caller's own request, locked; anyone else's is not found. Locks are taken in the order the
 * administrator side takes them (organization, then request), so the two sides cannot deadlock:
 * the request is read unlocked to learn its organization, then read again under the lock.
 */
export async function lockOwnRequest(
  tx: Tx,
  call: OrgCall,
  kind: RequestKind,
  id: string,
): Promise<{ org: OrganizationRow; r: RequestRow }> {
  const notFound = () => problem.notFound(`no such ${NAME[kind]}`);
  const seen = await findRequest(tx, call.realmId, kind, id);
  if (!seen || seen.user_id !== call.actor.id) throw notFound();
  const org = await lockOrganization(tx, call.realmId, seen.organization_id);
  if (!org) throw notFound();
  const r = await lockRequest(tx, call.realmId, kind, id);
  if (!r || r.user_id !== call.actor.id || r.organization_id !== org.id) throw notFound();
  return { org, r };
}

/**
 * Inserts the waiting membership and the pending request behind it, announced and audited as
 * created; a user with a live membership already gets `alreadyMember` as a conflict.
 */
export async function openRequest(
  tx: Tx,
  call: OrgCall,
  o: {
    kind: RequestKind;
    orgId: string;
    userId: string;
    roleIds: readonly string[];
    requestedBy: string | null;
    message: string | null;
    ttlMs: number;
    alreadyMember: string;
  },
): Promise<RequestRow> {
  const record = recorder(tx, call);
  if (await findLiveMembership(tx, call.realmId, o.orgId, o.userId)) throw problem.conflict(o.alreadyMember);
  const m = await insertMembership(
    tx,
    call.realmId,
    {
      orgId: o.orgId,
      userId: o.userId,
      state: o.kind === 'invitation' ? 'invited' : 'pending_approval',
      source: o.kind,
    },
    call.now,
  );
  const r = await insertRequest(
    tx,
    call.realmId,
    {
      kind: o.kind,
      membershipId: m.id,
      orgId: o.orgId,
      userId: o.userId,
      roleIds: o.roleIds,
      requestedBy: o.requestedBy,
      message: o.message,
      expiresAt: new Date(call.now.getTime() + o.ttlMs),
    },
    call.now,
  );
  if (r.kind === 'invitation') {
    await record.event('organization.invitation.created', { invitation_id: r.id }, o.orgId);
  } else {
    await record.event('organization.join_request.created', { join_request_id: r.id }, o.orgId);
  }
  await auditOrg(record, CREATED[o.kind], o.orgId, {
    subject: { type: 'user', id: o.userId },
    // Join requests carry no roles until approved, so their audit names none.
    data: {
      ...requestRef(r),
      membership_id: m.id,
      ...(o.kind === 'invitation' ? { role_ids: o.roleIds } : {}),
    },
  });
  return r;
}

/**
 * Ends the request and removes the membership behind it; no membership event (it never was
 * active). Roles given to the user directly while the request was open go with it, announced
 * unless the sweep ends it.
 */
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
  await dropOrgHoldings(tx, call, r.organization_id, r.user_id, outcome !== 'expired');
  await authorizationChanged(tx, call.realmId, [{ type: 'user', id: r.user_id }]);
  return closed;
}

/** Refuses a request that is no longer open, otherwise closes it and audits who did and why. */
export async function endOpenRequest(
  tx: Tx,
  call: OrgCall,
  r: RequestRow,
  end: {
    outcome: 'declined' | 'revoked' | 'denied' | 'withdrawn';
    decidedBy: string | null;
    audit: AuditType;
    reason?: string | null;
  },
): Promise<RequestRow> {
  const record = recorder(tx, call);
  requireOpen(r, call.now);
  const closed = await closeRequest(tx, call, r, end.outcome, end.decidedBy);
  await auditOrg(record, end.audit, r.organization_id, {
    subject: { type: 'user', id: r.user_id },
    reason: end.reason ?? null,
    data: { ...requestRef(r), membership_id: r.membership_id },
  });
  return closed;
}

/**
 * Accepts an open request: the waiting membership becomes active and gets the roles, each
 * announced; only an accepted invitation announces the membership itself, as join-request
 * approvals join silently.
 */
export async function acceptRequest(
  tx: Tx,
  call: OrgCall,
  r: RequestRow,
  accept: {
    outcome: 'accepted' | 'approved';
    decidedBy: string | null;
    audit: AuditType;
    roleIds: readonly string[];
  },
): Promise<MembershipView> {
  const record = recorder(tx, call);
  await decideRequest(tx, call.realmId, r.id, accept.outcome, accept.decidedBy, call.now);
  const m = await setMembershipState(
    tx,
    call.realmId,
    r.membership_id,
    { state: 'active', joined: true },
    call.now,
  );
  if (r.kind === 'invitation') {
    await record.event(
      'organization.membership.added',
      { user_id: m.user_id, membership_id: m.id, source: 'invitation' },
      m.organization_id,
    );
  }
  await assignThroughMembership(tx, call, m, accept.roleIds, r.kind);
  await authorizationChanged(tx, call.realmId, [{ type: 'user', id: m.user_id }]);
  await auditOrg(record, accept.audit, m.organization_id, {
    subject: { type: 'user', id: m.user_id },
    data: { ...requestRef(r), membership_id: m.id, role_ids: accept.roleIds },
  });
  return membershipView(tx, call.realmId, m);
}

type EndOutcome = {
  outcome: 'declined' | 'revoked' | 'denied' | 'withdrawn';
  audit: AuditType;
  reason?: string | null;
};

/** An administrator ends the organization's open request. */
export const endOrgRequest = (
  db: Db,
  call: OrgCall,
  orgId: string,
  kind: RequestKind,
  id: string,
  end: EndOutcome,
) =>
  db.tx(async (tx) => {
    const { r } = await lockOrgRequest(tx, call, orgId, kind, id);
    return endOpenRequest(tx, call, r, { ...end, decidedBy: call.actor.id });
  });

/** The requested user ends their own open request. */
export const endOwnRequest = (db: Db, call: OrgCall, kind: RequestKind, id: string, end: EndOutcome) =>
  db.tx(async (tx) => {
    const { r } = await lockOwnRequest(tx, call, kind, id);
    return endOpenRequest(tx, call, r, { ...end, decidedBy: r.user_id });
  });
