// Memberships an organization's own directory makes and ends, in the transaction of the change
// that causes them: a sign-in through one of its identity providers (doc 2, Organization
// membership: just-in-time federation makes an active membership, with the connection's default
// role held through it; the connection's administrator chose the role within their own authority,
// identity-providers/connection-rules.ts), or its SCIM connector provisioning an account
// (docs/scim.md).
import { recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Tx } from '../platform/db/db.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { assignThroughMembership, endMembership } from './membership-rules.ts';
import { countLiveMembershipsOfUser, findLiveMembership, insertMembership } from './memberships.repo.ts';
import { auditOrg } from './org-records.ts';

export const FEDERATION_SOURCE = 'federation';

/** Joins the account to the organization, unless it already has a live membership there. */
export const joinThroughFederation = (
  tx: Tx,
  call: Call,
  orgId: string,
  userId: string,
  roleIds: readonly string[],
): Promise<string | null> => joinFromDirectory(tx, call, orgId, userId, roleIds, FEDERATION_SOURCE);

/** As joinThroughFederation, with the membership's source named (`federation`, `scim`). */
export async function joinFromDirectory(
  tx: Tx,
  call: Call,
  orgId: string,
  userId: string,
  roleIds: readonly string[],
  source: string,
): Promise<string | null> {
  if (await findLiveMembership(tx, call.realmId, orgId, userId)) return null;
  const m = await insertMembership(tx, call.realmId, { orgId, userId, state: 'active', source }, call.now);
  const record = recorder(tx, call);
  await record.event(
    'organization.membership.added',
    { user_id: userId, membership_id: m.id, source },
    orgId,
  );
  await assignThroughMembership(tx, { ...call, permissions: new Set(), caller: null }, m, roleIds, source);
  await authorizationChanged(tx, call.realmId, [{ type: 'user', id: userId }]);
  await auditOrg(record, 'organization.membership.added', orgId, {
    subject: { type: 'user', id: userId },
    data: { membership_id: m.id, source, role_ids: roleIds },
  });
  return m.id;
}

/**
 * Ends the account's live membership of the organization as its directory deprovisions it: its
 * roles and grants there end at once. Answers how many live memberships the account keeps
 * elsewhere, so the caller can tell whether the account is still anyone's.
 */
export async function leaveFromDirectory(
  tx: Tx,
  call: Call,
  orgId: string,
  userId: string,
  reason: string,
): Promise<number> {
  const m = await findLiveMembership(tx, call.realmId, orgId, userId);
  if (m) {
    const ended = await endMembership(tx, { ...call, permissions: new Set(), caller: null }, m, {
      state: 'removed',
      endedReason: reason,
      unassignEvents: true,
    });
    const record = recorder(tx, call);
    if (m.state === 'active' || m.state === 'suspended')
      await record.event(
        'organization.membership.removed',
        { user_id: userId, membership_id: m.id, authorization_revision: ended.authorization_revision },
        orgId,
      );
    await auditOrg(record, 'organization.membership.removed', orgId, {
      subject: { type: 'user', id: userId },
      reason,
      data: { membership_id: m.id, from: m.state, state: ended.state },
    });
  }
  return countLiveMembershipsOfUser(tx, call.realmId, userId);
}
