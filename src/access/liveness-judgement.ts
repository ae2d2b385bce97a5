// What a live-check row means (spec doc 2, Revocation exposure): the verdict on one token, with
// the roles, decision facts and support facts it carries. Both statement builders' rows are judged
// here (token-liveness.ts, lean-liveness.ts); a lean row names only its shape's columns, so a
// missing column reads as null.
import { type ClientAuthFacts, clientAuthFactsFrom } from '../clients/index.ts';
import type { RoleHolding } from '../roles/effective-roles.ts';
import { type HeldRoles, holdingsOf, type RoleDefinitions } from '../roles/role-definitions.ts';
import { mayHoldTokens } from '../users/account.states.ts';
import type { CheckFacts } from './live-check-sql.ts';

/** What the judgement reads of a token (token-liveness.ts's TokenFacts explains each member). */
export type JudgedFacts = CheckFacts & { issuedAt: number };

export type Inactivity =
  | 'key_inactive'
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
  caller: ClientAuthFacts | null;
  /** The project named by rolesProjectId, when it exists. */
  project: { id: string; state: string; owner_organization_id: string | null } | null;
  /** The projects named by rolesProjectIds that exist. */
  projects: { id: string; state: string; owner_organization_id: string | null }[];
  /** With decision: what it asked for (DecisionQuery). */
  decision: DecisionFacts | null;
  /** With supportGrantId: the grant and its resource's support policy, live or not. */
  support: SupportFacts | null;
}

export interface SupportFacts {
  grantId: string;
  actorUserId: string;
  write: boolean;
  impersonationEnabled: boolean;
  /** The resource's impersonation_policy as stored (ImpersonationPolicy), or null. */
  policy: unknown;
}

export interface DecisionFacts {
  policyRevision: number;
  authzRevision: number;
  /** The realm policy's policy_engine member as stored. */
  policyEngine: unknown;
  /** The token resource's scopes as stored (ResourceScope[]). */
  resourceScopes: unknown;
  /** Sensitivity by permission name, for the asked names that are registered. */
  sensitivities: Record<string, string>;
  /** The asked resource types that are relationship types. */
  definedTypes: string[];
  /** Every relationship type of the realm by name ({relations, permissions}); null: unchanged. */
  types: Record<string, { relations: unknown; permissions: unknown }> | null;
  /** Organizations the user is an active member of (active organizations). */
  memberOrgIds: string[];
  /** Groups the subject belongs to, ancestors included. */
  groupIds: string[];
  /**
   * Of the organizations named by rolesOrgIds, those the subject is live in: active, and a live
   * membership (user) or allowed (service principal).
   */
  liveOrgIds: string[];
  /** A service principal's allowed_organization_ids (null: any); null for users. */
  principalOrgIds: string[] | null;
}

export interface LivenessRow {
  /** A batch's row: the index of its token. */
  ord?: number;
  client_state: string | null;
  client_row_id: string | null;
  /** The token's signing key is still published (null: the token names no key). */
  key_live: boolean | null;
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
  roles: HeldRoles | string | null;
  introspector_allowed: boolean | null;
  caller: unknown;
  org_state: string | null;
  org_member: boolean | null;
  project: { id: string; state: string; owner_organization_id: string | null } | null;
  projects: unknown;
  realm_facts: { policy_revision: number; authz_revision: number; policy_engine: unknown } | string | null;
  resource_scopes: unknown;
  sensitivities: unknown;
  defined_types: string[] | null;
  authz_types: unknown;
  member_org_ids: string[] | null;
  group_ids: string[] | null;
  live_org_ids: string[] | null;
  principal_orgs: unknown;
  support: unknown;
}

// pg and PGlite hand json columns over parsed; text is tolerated all the same.
const parsed = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

function decisionFactsOf(r: Partial<LivenessRow>): DecisionFacts | null {
  const realm = parsed(r.realm_facts) as {
    policy_revision: number;
    authz_revision: number;
    policy_engine: unknown;
  } | null;
  if (!realm) return null;
  return {
    policyRevision: Number(realm.policy_revision),
    authzRevision: Number(realm.authz_revision),
    policyEngine: realm.policy_engine ?? null,
    resourceScopes: parsed(r.resource_scopes) ?? null,
    sensitivities: (parsed(r.sensitivities) as Record<string, string> | null) ?? {},
    definedTypes: r.defined_types ?? [],
    types: (parsed(r.authz_types) as DecisionFacts['types']) ?? null,
    memberOrgIds: r.member_org_ids ?? [],
    groupIds: r.group_ids ?? [],
    liveOrgIds: r.live_org_ids ?? [],
    principalOrgIds: (parsed(r.principal_orgs) as { allowed: string[] | null } | null)?.allowed ?? null,
  };
}

function supportFactsOf(
  f: JudgedFacts,
  r: Partial<LivenessRow>,
): { live: boolean; facts: SupportFacts } | null {
  const v = parsed(r.support) as {
    live: boolean | null;
    actor_user_id: string;
    write: boolean;
    impersonation_enabled: boolean;
    policy: unknown;
  } | null;
  if (!v || !f.supportGrantId) return null;
  return {
    live: v.live === true,
    facts: {
      grantId: f.supportGrantId,
      actorUserId: v.actor_user_id,
      write: v.write,
      impersonationEnabled: v.impersonation_enabled,
      policy: parsed(v.policy) ?? null,
    },
  };
}

/**
 * The judgement of one token's row. A lean row (lean-liveness.ts) names only its shape's columns,
 * so a missing column reads as null here; `caller`, when given, is the calling client already
 * read (a lean read may take it from the process's kept copy).
 */
export function judgeLiveness(
  f: JudgedFacts,
  r: Partial<LivenessRow>,
  known: RoleDefinitions | undefined,
  caller?: ClientAuthFacts | null,
): Liveness {
  const support = supportFactsOf(f, r);
  const roles = holdingsOf(f.realmId, known, (parsed(r.roles) as HeldRoles | null | undefined) ?? null) ?? [];
  const userState = r.user_state ?? null;
  const principalState = r.principal_state ?? null;
  const subjectType = userState !== null ? 'user' : principalState !== null ? 'service_principal' : null;
  const result = (reason: Inactivity | null): Liveness => ({
    active: reason === null,
    reason,
    subjectType,
    authzVersion: r.user_authz ?? r.principal_authz ?? null,
    userState,
    sessionMfa: r.session_mfa === true,
    sessionRecoveryRestricted: r.session_restricted === true,
    roles,
    introspectorAllowed: r.introspector_allowed === true,
    caller: caller === undefined ? clientAuthFactsFrom(r.caller) : caller,
    project: r.project ?? null,
    projects: (parsed(r.projects) as Liveness['projects'] | null | undefined) ?? [],
    decision: decisionFactsOf(r),
    support: support?.facts ?? null,
  });
  if ((f.keyId ?? null) !== null && r.key_live !== true) return result('key_inactive');
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
    return result(principalState === 'active' ? null : 'subject_inactive');
  }
  if (subjectType === null || !mayHoldTokens(userState)) return result('subject_inactive');
  // One-second resolution: a token issued in the revoking second is revoked too.
  const revokedBefore = r.revoked_before ?? null;
  if (revokedBefore !== null && f.issuedAt <= Math.floor(revokedBefore)) return result('account_revoked');
  if (f.sessionId !== null && r.session_live !== true) return result('session_inactive');
  if (f.supportGrantId) {
    if (support?.live !== true) return result('grant_inactive');
  } else if (!r.user_grant || (f.exchanged && !r.exchange_grant)) return result('grant_inactive');
  return result(null);
}
