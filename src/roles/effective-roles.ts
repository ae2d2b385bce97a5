// The roles a subject holds in one context (realm, one organization, one project): assignments to
// the subject and to the groups it belongs to (a group's members also hold what its ancestors
// hold), composite roles expanded, validity windows applied. An organization-scope assignment
// counts only while the organization is active and the user's membership in it is active (or the
// service principal is allowed in it); a project-scope one only while the project is active.
// Everything is one scalar subquery, so a caller folds it into the statement it already runs:
// effectiveRolesSql expands composites in SQL; heldAssignmentsSql reads the assignments alone, for
// the live checks, which expand them from the process's copy of the definitions (role-definitions.ts).
import { liveMembershipSql } from './live-membership.ts';
import { BUILTIN_ROLES, type RoleScope } from './permissions.ts';

/** Limits of doc 2, Limits: group depth 8, role expansion 64. */
export const MAX_GROUP_DEPTH = 8;
export const MAX_ROLE_EXPANSION = 64;

export interface AssignmentConditions {
  /** The session must have completed MFA. */
  require_mfa?: boolean;
  /** The subject must have authenticated at most this long ago. */
  max_auth_age_seconds?: number;
}

export interface RoleHolding {
  name: string;
  builtin: boolean;
  permissions: string[];
  /** Where the assignment behind it applies; absent for callers that load realm roles only. */
  scope_type?: RoleScope;
  scope_id?: string;
  conditions?: AssignmentConditions | null;
}

/** SQL expressions (parameters such as `$1`, or column references) naming the context. */
export interface RoleContextSql {
  realmId: string;
  /** 'user' or 'service_principal' */
  subjectType: string;
  subjectId: string;
  now: string;
  /** An organization id, or `null` */
  orgId: string;
  /** A project id, or `null` */
  projectId: string;
  /**
   * Organization states in which organization-scope assignments count (default active only). The
   * job re-check also counts a deleting organization, which the deletion it runs put there.
   */
  orgStates?: readonly ('active' | 'deleting')[];
}

/** The groups a subject belongs to, their ancestors included: CTE `sg(group_id, depth)`. */
export const subjectGroupsCte = (realmId: string, subjectType: string, subjectId: string): string =>
  `sg(group_id, depth) as (
    select gm.group_id, 1 from group_members gm
     where gm.realm_id = ${realmId} and gm.subject_type = ${subjectType} and gm.subject_id = ${subjectId}
    union
    select g.parent_id, sg.depth + 1 from sg join groups g on g.realm_id = ${realmId} and g.id = sg.group_id
     where g.parent_id is not null and sg.depth < ${MAX_GROUP_DEPTH}
  )`;

/** Which scopes a fragment of assignments considers; a scope left out holds nothing there. */
export interface AssignmentScopes {
  organization: boolean;
  project: boolean;
}

const ALL_SCOPES: AssignmentScopes = { organization: true, project: true };

/**
 * The condition on a role_assignments row `ra` that it counts now in the context: inside its
 * validity window, at realm scope, or in the context's organization (active, the subject live in
 * it) or project (active).
 */
function assignmentCountsSql(c: RoleContextSql, scopes: AssignmentScopes): string {
  const { realmId: R, subjectType: ST, subjectId: SID, now: NOW, orgId: ORG, projectId: PRJ } = c;
  const orgStates = (c.orgStates ?? ['active']).map((s) => `'${s}'`).join(', ');
  const member = `exists (select 1 from memberships m where m.realm_id = ${R} and m.organization_id = o.id
                                and m.user_id = ${SID} and ${liveMembershipSql('m', NOW)})`;
  const allowed = `exists (select 1 from service_principals sp where sp.realm_id = ${R} and sp.id = ${SID}
                                and (sp.allowed_organization_ids is null or o.id = any (sp.allowed_organization_ids)))`;
  // A subject type written as a literal picks its branch here; an expression leaves it to SQL.
  const live =
    ST === "'user'"
      ? member
      : ST === "'service_principal'"
        ? allowed
        : `(case when ${ST} = 'user'
                  then ${member}
                  else ${allowed}
                  end)`;
  const org = scopes.organization
    ? `
         or (ra.scope_type = 'organization' and ra.scope_id = ${ORG} and exists (
              select 1 from organizations o where o.realm_id = ${R} and o.id = ra.scope_id and o.state in (${orgStates})
                and ${live}))`
    : '';
  const project = scopes.project
    ? `
         or (ra.scope_type = 'project' and ra.scope_id = ${PRJ} and exists (
              select 1 from projects p where p.realm_id = ${R} and p.id = ra.scope_id and p.state = 'active'))`
    : '';
  return `(ra.valid_from is null or ra.valid_from <= ${NOW})
       and (ra.expires_at is null or ra.expires_at > ${NOW})
       and (ra.scope_type = 'realm'${org}${project})`;
}

/** A scalar subquery answering a JSON array of RoleHolding. */
export function effectiveRolesSql(c: RoleContextSql): string {
  const { realmId: R, subjectType: ST, subjectId: SID } = c;
  return `(with recursive
  ${subjectGroupsCte(R, ST, SID)},
  held(role_id, scope_type, scope_id, conditions, depth) as (
    select ra.role_id, ra.scope_type, ra.scope_id, ra.conditions, 1
      from role_assignments ra
     where ra.realm_id = ${R}
       and ((ra.subject_type = ${ST} and ra.subject_id = ${SID})
         or (ra.subject_type = 'group' and ra.subject_id in (select group_id from sg)))
       and ${assignmentCountsSql(c, ALL_SCOPES)}
    union
    select c.id, h.scope_type, h.scope_id, h.conditions, h.depth + 1
      from held h join roles r on r.realm_id = ${R} and r.id = h.role_id
      cross join lateral unnest(r.composite_role_ids) as c(id)
     where h.depth < ${MAX_ROLE_EXPANSION}
  )
  select json_agg(json_build_object('name', r.name, 'builtin', r.builtin, 'permissions', r.permissions,
           'scope_type', x.scope_type, 'scope_id', x.scope_id, 'conditions', x.conditions))
    from (select distinct role_id, scope_type, scope_id, conditions from held) x
    join roles r on r.realm_id = ${R} and r.id = x.role_id)`;
}

/**
 * A scalar subquery answering the assignments the subject holds directly or through its groups
 * that count now in the context, as a JSON array of [role_id, scope_type, scope_id, conditions]
 * (null: none), composites not expanded: role-definitions.ts expands them from the process's
 * copy of the realm's roles. `scopes` leaves out the scopes the context has none of, so the
 * statement reads no organization, membership or project there.
 */
export function heldAssignmentsSql(c: RoleContextSql, scopes: AssignmentScopes = ALL_SCOPES): string {
  const { realmId: R, subjectType: ST, subjectId: SID } = c;
  return `(with recursive ${subjectGroupsCte(R, ST, SID)}
  select json_agg(json_build_array(ra.role_id, ra.scope_type, ra.scope_id, ra.conditions))
    from role_assignments ra
   where ra.realm_id = ${R}
     and ((ra.subject_type = ${ST} and ra.subject_id = ${SID})
       or (ra.subject_type = 'group' and ra.subject_id = any (array(select group_id from sg))))
     and ${assignmentCountsSql(c, scopes)})`;
}

const builtinPermissions = new Map<string, readonly string[]>(
  Object.values(BUILTIN_ROLES).map((r) => [r.name, r.permissions]),
);

/** The permissions of one holding; built-in roles take theirs from code, so releases reach old realms. */
export const permissionsOfRole = (role: RoleHolding): readonly string[] =>
  role.builtin ? (builtinPermissions.get(role.name) ?? []) : role.permissions;

/** What the session proves, against which assignment conditions are checked. */
export interface SessionAssurance {
  mfa: boolean;
  /** Seconds since authentication; null when unknown. */
  authAgeSeconds: number | null;
}

/** Whether an assignment's conditions hold for this session. */
export function conditionsMet(c: AssignmentConditions | null | undefined, s: SessionAssurance): boolean {
  if (!c) return true;
  if (c.require_mfa === true && !s.mfa) return false;
  if (c.max_auth_age_seconds !== undefined) {
    if (s.authAgeSeconds === null || s.authAgeSeconds > c.max_auth_age_seconds) return false;
  }
  return true;
}

/**
 * The permissions the holdings give. With an assurance, holdings whose conditions the session
 * does not meet give nothing; without one, conditional holdings give nothing (the safe reading
 * for callers that cannot tell, such as job re-checks).
 */
export function permissionsOf(roles: readonly RoleHolding[], assurance?: SessionAssurance): Set<string> {
  const out = new Set<string>();
  for (const role of roles) {
    const unconditional = !role.conditions || Object.keys(role.conditions).length === 0;
    const met = assurance ? conditionsMet(role.conditions, assurance) : unconditional;
    if (!met) continue;
    for (const p of permissionsOfRole(role)) out.add(p);
  }
  return out;
}
