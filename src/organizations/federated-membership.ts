// The membership an account gets when a sign-in through one of the organization's identity
// providers creates it (doc 2, Organization membership: just-in-time federation makes an active
// membership), with the connection's default role held through it. Part of the sign-in's
// transaction; the connection's administrator chose the role within their own authority when
// they configured it (identity-providers/connection-rules.ts).
import { recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Tx } from '../platform/db/db.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { assignThroughMembership } from './membership-rules.ts';
import { findLiveMembership, insertMembership } from './memberships.repo.ts';
import { auditOrg } from './org-records.ts';

export const FEDERATION_SOURCE = 'federation';

/** Joins the account to the organization, unless it already has a live membership there. */
export async function joinThroughFederation(
  tx: Tx,
  call: Call,
  orgId: string,
  userId: string,
  roleIds: readonly string[],
): Promise<string | null> {
  if (await findLiveMembership(tx, call.realmId, orgId, userId)) return null;
  const m = await insertMembership(
    tx,
    call.realmId,
    { orgId, userId, state: 'active', source: FEDERATION_SOURCE },
    call.now,
  );
  const record = recorder(tx, call);
  await record.event(
    'organization.membership.added',
    { user_id: userId, membership_id: m.id, source: FEDERATION_SOURCE },
    orgId,
  );
  await assignThroughMembership(
    tx,
    { ...call, permissions: new Set(), caller: null },
    m,
    roleIds,
    FEDERATION_SOURCE,
  );
  await authorizationChanged(tx, call.realmId, [{ type: 'user', id: userId }]);
  await auditOrg(record, 'organization.membership.added', orgId, {
    subject: { type: 'user', id: userId },
    data: { membership_id: m.id, source: FEDERATION_SOURCE, role_ids: roleIds },
  });
  return m.id;
}
