// The organization a token is issued in (spec doc 1, API resource definition requires_organization;
// doc 2, Organization membership: only active memberships get tokens in an organization's
// context). Users act in an organization through an active membership; service principals
// through allowed_organization_ids (null: any organization).

import { maybeOne, type Queryable } from '../platform/db/db.ts';
import { liveMembershipSql } from '../roles/live-membership.ts';

/** The organization is active and the user's membership in it too. */
export async function userMayActIn(q: Queryable, realmId: string, orgId: string, userId: string, now: Date) {
  const r = await maybeOne<{ live: boolean }>(
    q,
    `select o.state = 'active' and exists (select 1 from memberships m where m.realm_id = o.realm_id
              and m.organization_id = o.id and m.user_id = $3 and ${liveMembershipSql('m', '$4')}) as live
       from organizations o where o.realm_id = $1 and o.id = $2`,
    [realmId, orgId, userId, now],
  );
  return r?.live === true;
}

/**
 * The active organization a service principal names by id or slug and may act in; null for an
 * unknown, inactive or disallowed one (one answer for all three).
 */
export async function serviceOrganization(
  q: Queryable,
  realmId: string,
  principalId: string,
  idOrSlug: string,
): Promise<string | null> {
  const r = await maybeOne<{ id: string }>(
    q,
    `select o.id from organizations o
       join service_principals p on p.realm_id = o.realm_id and p.id = $2
      where o.realm_id = $1 and o.state = 'active' and (o.id = $3 or lower(o.slug) = lower($3))
        and (p.allowed_organization_ids is null or o.id = any (p.allowed_organization_ids))
      order by (o.id = $3) desc limit 1`,
    [realmId, principalId, idOrSlug],
  );
  return r?.id ?? null;
}
