// SQL of invitations and join requests: the requests behind memberships in the invited and
// pending_approval states (doc 2, Organization membership).
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { RequestKind, RequestRow, RequestState } from './organizations.types.ts';

export interface NewRequest {
  kind: RequestKind;
  membershipId: string;
  orgId: string;
  userId: string;
  roleIds: readonly string[];
  requestedBy: string | null;
  message: string | null;
  expiresAt: Date;
}

export async function insertRequest(tx: Tx, realmId: string, r: NewRequest, now: Date): Promise<RequestRow> {
  const id = newId(r.kind === 'invitation' ? 'inv' : 'jrq', now.getTime());
  const res = await tx.query<RequestRow>(
    `insert into membership_requests (realm_id, id, kind, membership_id, organization_id, user_id, state, role_ids,
       last_sent_at, requested_by, message, expires_at, created_at)
     values ($1, $2, $3, $4, $5, $6, 'pending', $7, case when $3 = 'invitation' then $11::timestamptz end, $8, $9, $10, $11)
     returning *`,
    [
      realmId,
      id,
      r.kind,
      r.membershipId,
      r.orgId,
      r.userId,
      r.roleIds,
      r.requestedBy,
      r.message,
      r.expiresAt,
      now,
    ],
  );
  return res.rows[0] as RequestRow;
}

export const findRequest = (q: Queryable, realmId: string, kind: RequestKind, id: string) =>
  maybeOne<RequestRow>(q, 'select * from membership_requests where realm_id = $1 and kind = $2 and id = $3', [
    realmId,
    kind,
    id,
  ]);

export const lockRequest = (tx: Tx, realmId: string, kind: RequestKind, id: string) =>
  maybeOne<RequestRow>(
    tx,
    'select * from membership_requests where realm_id = $1 and kind = $2 and id = $3 for update',
    [realmId, kind, id],
  );

export const listOrgRequests = (
  q: Queryable,
  realmId: string,
  orgId: string,
  kind: RequestKind,
  page: { after: string | null; limit: number; state: string | null },
) =>
  many<RequestRow>(
    q,
    `select * from membership_requests
      where realm_id = $1 and organization_id = $2 and kind = $3 and ($4::text is null or id > $4)
        and ($6::text is null or state = $6)
      order by id limit $5`,
    [realmId, orgId, kind, page.after, page.limit, page.state],
  );

/** The user's pending requests of one kind, in organizations that are active. */
export const listPendingForUser = (
  q: Queryable,
  realmId: string,
  userId: string,
  kind: RequestKind,
  now: Date,
) =>
  many<RequestRow & { org_slug: string; org_display_name: string }>(
    q,
    `select r.*, o.slug as org_slug, o.display_name as org_display_name
       from membership_requests r join organizations o on o.realm_id = r.realm_id and o.id = r.organization_id
      where r.realm_id = $1 and r.user_id = $2 and r.kind = $3 and r.state = 'pending' and r.expires_at > $4
        and o.state = 'active'
      order by r.id limit 200`,
    [realmId, userId, kind, now],
  );

export async function decideRequest(
  tx: Tx,
  realmId: string,
  id: string,
  state: RequestState,
  decidedBy: string | null,
  now: Date,
): Promise<RequestRow> {
  const r = await tx.query<RequestRow>(
    `update membership_requests set state = $3, decided_by = $4, decided_at = $5
      where realm_id = $1 and id = $2 returning *`,
    [realmId, id, state, decidedBy, now],
  );
  return r.rows[0] as RequestRow;
}

export async function recordResend(tx: Tx, realmId: string, id: string, expiresAt: Date, now: Date) {
  const r = await tx.query<RequestRow>(
    `update membership_requests set resend_count = resend_count + 1, last_sent_at = $4, expires_at = $3
      where realm_id = $1 and id = $2 returning *`,
    [realmId, id, expiresAt, now],
  );
  return r.rows[0] as RequestRow;
}

/** The pending request behind a membership, if any. */
export const lockPendingRequestOf = (tx: Tx, realmId: string, membershipId: string) =>
  maybeOne<RequestRow>(
    tx,
    `select * from membership_requests where realm_id = $1 and membership_id = $2 and state = 'pending' for update`,
    [realmId, membershipId],
  );

/** Pending requests of the organization, for deletion. */
export const lockPendingRequestsOfOrg = (tx: Tx, realmId: string, orgId: string) =>
  many<RequestRow>(
    tx,
    `select * from membership_requests where realm_id = $1 and organization_id = $2 and state = 'pending'
      order by id for update`,
    [realmId, orgId],
  );
