// Worker task organizations.memberships (every minute): active memberships past expires_at become
// expired, and pending invitations (72 h) and join requests (14 days) past theirs end expired
// with their membership removed (spec doc 2, Organization membership). Membership expiry emits no
// event (doc 2, Catalog); each change is audited by the system actor.

import { recorder } from '../audit/index.ts';
import { systemCall } from '../kernel/call.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { closeRequest, requestRef } from './membership-requests.ts';
import { endMembership } from './membership-rules.ts';
import { auditOrg } from './org-records.ts';
import type { MembershipRow, OrgCall, RequestRow } from './organizations.types.ts';

const BATCH = 200;

const sweepCall = (realmId: string, now: Date): OrgCall => ({
  ...systemCall(realmId, now),
  permissions: new Set(),
  caller: null,
});

async function expireMemberships(db: Db, now: Date): Promise<number> {
  return db.tx(async (tx) => {
    const due = await tx.query<MembershipRow>(
      `select * from memberships where state = 'active' and expires_at is not null and expires_at <= $1
        order by expires_at limit ${BATCH} for update skip locked`,
      [now],
    );
    for (const m of due.rows) {
      const call = sweepCall(m.realm_id, now);
      await endMembership(tx, call, m, { state: 'expired', endedReason: 'expired', unassignEvents: false });
      await auditOrg(recorder(tx, call), 'organization.membership.expired', m.organization_id, {
        subject: { type: 'user', id: m.user_id },
        data: { membership_id: m.id, expires_at: new Date(m.expires_at as Date).toISOString() },
      });
    }
    return due.rows.length;
  });
}

async function expireRequests(db: Db, now: Date): Promise<{ invitations: number; joinRequests: number }> {
  return db.tx(async (tx) => {
    const due = await tx.query<RequestRow>(
      `select * from membership_requests where state = 'pending' and expires_at <= $1
        order by expires_at limit ${BATCH} for update skip locked`,
      [now],
    );
    let invitations = 0;
    for (const r of due.rows) {
      const call = sweepCall(r.realm_id, now);
      await closeRequest(tx, call, r, 'expired', null);
      const invitation = r.kind === 'invitation';
      if (invitation) invitations++;
      await auditOrg(
        recorder(tx, call),
        invitation ? 'organization.invitation.expired' : 'organization.join_request.expired',
        r.organization_id,
        {
          subject: { type: 'user', id: r.user_id },
          data: { ...requestRef(r), membership_id: r.membership_id },
        },
      );
    }
    return { invitations, joinRequests: due.rows.length - invitations };
  });
}

export async function sweepMemberships(deps: { db: Db }, now: Date): Promise<TaskReport> {
  const memberships = await expireMemberships(deps.db, now);
  const requests = await expireRequests(deps.db, now);
  return {
    memberships_expired: memberships,
    invitations_expired: requests.invitations,
    join_requests_expired: requests.joinRequests,
  };
}
