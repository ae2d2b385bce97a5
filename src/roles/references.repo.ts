// Existence checks for the objects that roles, assignments, groups, projects and service principals
// refer to. "Live" follows doc 2: deleted accounts, deleted principals and organizations being
// deleted are gone.
import { many, maybeOne, type Queryable } from '../platform/db/db.ts';

export const findLiveOrganization = (q: Queryable, realmId: string, id: string) =>
  maybeOne<{ id: string; state: string }>(
    q,
    `select id, state from organizations where realm_id = $1 and id = $2 and state not in ('deleting', 'deleted')`,
    [realmId, id],
  );

/** The subset of ids naming organizations that are not deleted. */
export async function liveOrganizationIds(q: Queryable, realmId: string, ids: readonly string[]) {
  const rows = await many<{ id: string }>(
    q,
    `select id from organizations where realm_id = $1 and id = any ($2::text[]) and state not in ('deleting', 'deleted')`,
    [realmId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

export const findLiveUser = (q: Queryable, realmId: string, id: string) =>
  maybeOne<{ id: string; state: string }>(
    q,
    `select id, state from users where realm_id = $1 and id = $2 and state <> 'deleted'`,
    [realmId, id],
  );

export const findLivePrincipal = (q: Queryable, realmId: string, id: string) =>
  maybeOne<{ id: string; state: string; allowed_organization_ids: string[] | null }>(
    q,
    `select id, state, allowed_organization_ids from service_principals
      where realm_id = $1 and id = $2 and state <> 'deleted'`,
    [realmId, id],
  );

export const findProjectRef = (q: Queryable, realmId: string, id: string) =>
  maybeOne<{ id: string; state: string; owner_organization_id: string | null }>(
    q,
    'select id, state, owner_organization_id from projects where realm_id = $1 and id = $2',
    [realmId, id],
  );

export const findGroupRef = (q: Queryable, realmId: string, id: string) =>
  maybeOne<{ id: string; organization_id: string | null }>(
    q,
    'select id, organization_id from groups where realm_id = $1 and id = $2',
    [realmId, id],
  );

/** The user's membership in the organization that is neither removed nor expired. */
export const findCurrentMembership = (q: Queryable, realmId: string, orgId: string, userId: string) =>
  maybeOne<{ id: string; state: string; expires_at: Date | null }>(
    q,
    `select id, state, expires_at from memberships where realm_id = $1 and organization_id = $2 and user_id = $3
        and state not in ('removed', 'expired')`,
    [realmId, orgId, userId],
  );

/** A service principal may act in the organization (null list: any organization). */
export const principalAllowedIn = (
  p: { allowed_organization_ids: string[] | null },
  orgId: string,
): boolean => p.allowed_organization_ids === null || p.allowed_organization_ids.includes(orgId);
