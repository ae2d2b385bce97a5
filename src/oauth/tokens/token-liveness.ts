// The live checks behind every online use of an access token: the service's own APIs, UserInfo
// and introspection (spec doc 2, Revocation exposure). One SQL statement answers all of them, so
// an introspection costs one database round trip; nothing here is cached.

import { effectiveRolesSql, type RoleHolding } from '../../authz/effective-roles.ts';
import { type ClientAuthRow, clientAuthJsonOf, clientAuthRowFrom } from '../../clients/client-auth.repo.ts';
import { one, type Queryable } from '../../platform/db/db.ts';

export type { RoleHolding };

export interface TokenFacts {
  realmId: string;
  subject: string;
  clientId: string;
  tokenId: string;
  /** NumericDate seconds */
  issuedAt: number;
  sessionId: string | null;
  audience: string;
  /**
   * The resource id of the audience (builtin:<name> or res_…); null: the registered resource
   * whose audience is `audience`, found in the same statement (introspection).
   */
  resourceId: string | null;
  /** The token came from a token exchange (it has an act claim). */
  exchanged: boolean;
  /** Also load the subject's roles (administration API): realm scope, and rolesOrgId's scope. */
  withRoles?: boolean;
  /** With withRoles: also the roles held inside this organization. */
  rolesOrgId?: string | null;
  /** With withRoles: also the roles held inside this project; its row comes back as `project`. */
  rolesProjectId?: string | null;
  /**
   * The token's org_id claim: the organization must be active and the user's membership in it
   * (or the service principal's permission to act in it) too.
   */
  orgId?: string | null;
  /** Introspection: the calling client's row id, answered as `introspectorAllowed`. */
  introspectorRowId?: string | null;
  /**
   * Introspection: the calling client's client_id. Its row and secrets come back as `caller`
   * (for client authentication in the same round trip), and it is the introspector checked
   * when introspectorRowId is not given.
   */
  callerClientId?: string | null;
}

export type Inactivity =
  | 'client_inactive'
  | 'subject_inactive'
  | 'session_inactive'
  | 'account_revoked'
  | 'token_revoked'
  | 'grant_inactive'
  | 'resource_inactive'
  | 'organization_inactive'
  | 'membership_inactive';

export interface Liveness {
  active: boolean;
  reason: Inactivity | null;
  subjectType: 'user' | 'service_principal' | null;
  /** Current authorization version of the subject. */
  authzVersion: number | null;
  userState: string | null;
  /** The session completed MFA. */
  sessionMfa: boolean;
  sessionRecoveryRestricted: boolean;
  roles: RoleHolding[];
  /** The client named by `introspectorRowId` is registered for the token's resource. */
  introspectorAllowed: boolean;
  /** The calling client (callerClientId) as client authentication reads it. */
  caller: ClientAuthRow | null;
  /** The project named by rolesProjectId, when it exists. */
  project: { id: string; state: string; owner_organization_id: string | null } | null;
}

interface LivenessRow {
  client_state: string | null;
  client_row_id: string | null;
  user_state: string | null;
  user_authz: number | null;
  principal_state: string | null;
  principal_authz: number | null;
  session_live: boolean | null;
  session_mfa: boolean | null;
  session_restricted: boolean | null;
  revoked_before: number | null;
  jti_revoked: boolean;
  user_grant: boolean;
  exchange_grant: boolean;
  resource_state: string | null;
  roles: RoleHolding[] | null;
  introspector_allowed: boolean | null;
  caller: unknown;
  org_state: string | null;
  org_member: boolean | null;
  project: { id: string; state: string; owner_organization_id: string | null } | null;
}

// Users in these states hold no live tokens (doc 1, Account states).
const LIVE_USER_STATES = new Set(['active', 'recovery_restricted', 'pending_verification']);

/** Whether an account in this state may hold live tokens. */
export const isLiveUserState = (state: string | null | undefined): boolean =>
  LIVE_USER_STATES.has(state ?? '');

// Every lookup is by primary or unique key; subqueries a token cannot need are skipped.
const SQL = `
select c.state as client_state, c.id as client_row_id,
  u.state as user_state, u.authz_version as user_authz,
  p.state as principal_state, p.authz_version as principal_authz,
  (s.user_id = $2 and s.revoked_at is null and s.idle_expires_at > $8 and s.absolute_expires_at > $8) as session_live,
  s.mfa as session_mfa, s.recovery_restricted as session_restricted,
  extract(epoch from ur.revoked_before)::float8 as revoked_before,
  exists (select 1 from token_revocations t where t.realm_id = $1 and t.jti = $4) as jti_revoked,
  case when u.id is not null and not $12::boolean then exists (select 1 from oauth_grants g
     where g.realm_id = $1 and g.user_id = $2 and g.client_id = $3 and g.revoked_at is null
       and g.org_id is not distinct from $14::text) end as user_grant,
  case when $12::boolean then exists (select 1 from client_resource_grants x
     where x.realm_id = $1 and x.client_row_id = c.id and x.resource_id = coalesce($7, res.id)) end as exchange_grant,
  res.state as resource_state,
  org.state as org_state,
  case when org.id is not null then (case when u.id is not null
    then exists (select 1 from memberships m where m.realm_id = $1 and m.organization_id = org.id
                  and m.user_id = $2 and m.state = 'active')
    else (p.allowed_organization_ids is null or org.id = any (p.allowed_organization_ids)) end)
  end as org_member,
  case when $15::text is not null then (select json_build_object('id', pr.id, 'state', pr.state,
      'owner_organization_id', pr.owner_organization_id)
    from projects pr where pr.realm_id = $1 and pr.id = $15) end as project,
  case when coalesce($10, cc.id) is not null then exists (select 1 from resource_introspectors i
     where i.realm_id = $1 and i.resource_id = coalesce($7, res.id) and i.client_row_id = coalesce($10, cc.id))
  end as introspector_allowed,
  case when cc.id is not null then ${clientAuthJsonOf('cc', 8)} end as caller,
  case when $9::boolean then ${effectiveRolesSql({
    realmId: '$1',
    subjectType: "(case when u.id is not null then 'user' else 'service_principal' end)",
    subjectId: '$2',
    now: '$8',
    orgId: '$13::text',
    projectId: '$15::text',
  })}
  end as roles
from (select 1) one
left join clients c on c.realm_id = $1 and c.client_id = $3
left join users u on u.realm_id = $1 and u.id = $2
left join service_principals p on p.realm_id = $1 and p.id = $2
left join sessions s on s.realm_id = $1 and s.id = $5
left join user_revocations ur on ur.realm_id = $1 and ur.user_id = $2
left join resources res on res.realm_id = $1 and res.audience = $6
left join clients cc on cc.realm_id = $1 and cc.client_id = $11
left join organizations org on org.realm_id = $1 and org.id = $14`;

export async function checkLiveness(q: Queryable, f: TokenFacts, now: Date): Promise<Liveness> {
  const r = await one<LivenessRow>(q, SQL, [
    f.realmId,
    f.subject,
    f.clientId,
    f.tokenId,
    f.sessionId,
    f.audience,
    f.resourceId,
    now,
    f.withRoles ?? false,
    f.introspectorRowId ?? null,
    f.callerClientId ?? null,
    f.exchanged,
    f.rolesOrgId ?? null,
    f.orgId ?? null,
    f.rolesProjectId ?? null,
  ]);
  const subjectType =
    r.user_state !== null ? 'user' : r.principal_state !== null ? 'service_principal' : null;
  const result = (reason: Inactivity | null): Liveness => ({
    active: reason === null,
    reason,
    subjectType,
    authzVersion: r.user_authz ?? r.principal_authz,
    userState: r.user_state,
    sessionMfa: r.session_mfa === true,
    sessionRecoveryRestricted: r.session_restricted === true,
    roles: r.roles ?? [],
    introspectorAllowed: r.introspector_allowed === true,
    caller: clientAuthRowFrom(r.caller),
    project: r.project,
  });
  if (r.client_state !== 'active') return result('client_inactive');
  const registered = f.resourceId === null || f.resourceId.startsWith('res_');
  if (registered && r.resource_state !== 'active') return result('resource_inactive');
  if (r.jti_revoked) return result('token_revoked');
  // doc 2, Revocation exposure: membership and organization active when org_id is present.
  if (f.orgId) {
    if (r.org_state !== 'active') return result('organization_inactive');
    if (r.org_member !== true) return result('membership_inactive');
  }
  if (subjectType === 'service_principal') {
    return result(r.principal_state === 'active' ? null : 'subject_inactive');
  }
  if (subjectType === null || !isLiveUserState(r.user_state)) return result('subject_inactive');
  // One-second resolution: a token issued in the revoking second is revoked too.
  if (r.revoked_before !== null && f.issuedAt <= Math.floor(r.revoked_before))
    return result('account_revoked');
  if (f.sessionId !== null && r.session_live !== true) return result('session_inactive');
  if (f.exchanged ? !r.exchange_grant : !r.user_grant) return result('grant_inactive');
  return result(null);
}
