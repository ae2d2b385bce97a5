// The local part of one decision (docs/authorization.md, "Evaluation order", steps 1 to 5): the
// subject token's live state, the organization, the project, then roles (RBAC) or, for a
// relationship type, the graph check to run. Pure: the facts come from the one statement.

import type { Liveness } from '../access/token-liveness.ts';
import type { GraphCheck, GraphSubject } from '../relationships/graph.ts';
import { definesName } from '../relationships/model.ts';
import type { RoleHolding } from '../roles/effective-roles.ts';
import { mayHoldRoles } from '../users/account.states.ts';
import { rbacAnswer, type SubjectAssurance, storedScopes } from './assurance.ts';
import { type Outcome, outcome } from './decision.ts';
import type { CheckRequest } from './decisions.decode.ts';
import type { SubjectToken } from './subject-token.ts';
import { supportAccessOutcome } from './support-access.ts';
import type { TypeSet } from './type-cache.ts';

export type LocalStep =
  | { kind: 'final'; outcome: Outcome }
  /** Past steps 1-3: the roles or the graph answer next. */
  | { kind: 'rbac'; outcome: Outcome }
  | { kind: 'graph'; check: GraphCheck };

/** The organization a check runs in: the token's, else the resource's. */
export const effectiveOrg = (t: SubjectToken, r: CheckRequest): string | null => t.orgId ?? r.resource.orgId;

export function assuranceOf(t: SubjectToken, live: Liveness, nowSeconds: number): SubjectAssurance {
  if (live.subjectType === 'service_principal') {
    // A service principal authenticates each time it obtains a token.
    return { interactive: false, acr: null, mfa: true, authAgeSeconds: Math.max(0, nowSeconds - t.issuedAt) };
  }
  const strongAcr = t.acr === 'mfa' || t.acr === 'phishing_resistant';
  return {
    interactive: true,
    acr: t.acr,
    mfa: live.sessionMfa || strongAcr,
    authAgeSeconds: t.authTime === null ? null : Math.max(0, nowSeconds - t.authTime),
  };
}

/** The holdings that count for one check: realm scope, its organization and its project. */
export function rolesIn(
  roles: readonly RoleHolding[],
  org: string | null,
  project: string | null,
): RoleHolding[] {
  return roles.filter(
    (h) =>
      h.scope_type === undefined ||
      h.scope_type === 'realm' ||
      (h.scope_type === 'organization' && h.scope_id === org) ||
      (h.scope_type === 'project' && h.scope_id === project),
  );
}

export function subjectHolds(live: Liveness): boolean {
  if (!live.active || live.subjectType === null) return false;
  return live.subjectType === 'service_principal' || mayHoldRoles(live.userState);
}

/** The subject of a graph check, as the decision's statement found it. */
export function graphSubject(live: Liveness, id: string): GraphSubject {
  const d = live.decision;
  if (live.subjectType === 'service_principal') {
    const allowed = d?.principalOrgIds ?? null;
    return {
      type: 'service_principal',
      id,
      memberOrgIds: new Set(),
      groupIds: new Set(d?.groupIds ?? []),
      tupleOrgIds: allowed === null ? 'any' : new Set(allowed),
    };
  }
  const memberOrgIds = new Set(d?.memberOrgIds ?? []);
  return { type: 'user', id, memberOrgIds, groupIds: new Set(d?.groupIds ?? []), tupleOrgIds: memberOrgIds };
}

export function localStep(
  r: CheckRequest,
  t: SubjectToken,
  live: Liveness,
  types: TypeSet | null,
  a: SubjectAssurance,
): LocalStep {
  const final = (o: Outcome): LocalStep => ({ kind: 'final', outcome: o });
  if (!subjectHolds(live)) return final(outcome('SUBJECT_TOKEN_INACTIVE'));
  if (t.orgId !== null && r.resource.orgId !== null && t.orgId !== r.resource.orgId)
    return final(outcome('ORGANIZATION_MISMATCH'));
  const org = effectiveOrg(t, r);
  const projectId = r.resource.projectId;
  if (projectId !== null) {
    // A project that is not active is unknown to decisions: its roles count nowhere.
    const project = live.projects.find((p) => p.id === projectId);
    if (!project || project.state !== 'active') return final(outcome('UNKNOWN_PROJECT'));
    const owner = project.owner_organization_id;
    if (owner !== null && owner !== org) return final(outcome('PROJECT_ORGANIZATION_MISMATCH'));
  }
  // A support token's own rules come first; what they let through is judged as the customer.
  if (t.supportGrantId !== null) {
    if (!live.support || !live.decision) return final(outcome('SUBJECT_TOKEN_INACTIVE'));
    const refused = supportAccessOutcome(
      live.support,
      storedScopes(live.decision.resourceScopes),
      live.decision.sensitivities,
      r.action,
      t.scopes,
    );
    if (refused) return final(refused);
  }
  const type = live.decision?.definedTypes.includes(r.resource.type)
    ? types?.types.get(r.resource.type)
    : undefined;
  if (type) {
    if (!definesName(type, r.action) || r.resource.id === null) return final(outcome('INVALID_REQUEST'));
    // Relationships in an organization the subject is not live in grant nothing, realm-wide
    // tuples included: the check is asked about that organization (the token's own organization
    // was checked live already).
    if (org !== null && !live.decision?.liveOrgIds.includes(org)) return final(outcome('NOT_PERMITTED'));
    return {
      kind: 'graph',
      check: {
        objectType: type.name,
        objectId: r.resource.id,
        name: r.action,
        orgId: org,
        subject: graphSubject(live, t.subject),
      },
    };
  }
  // A defined type the compiled set lacks (a row that no longer compiles) cannot be judged.
  if (live.decision?.definedTypes.includes(r.resource.type)) return final(outcome('EVALUATION_ERROR'));
  const rbac = rbacAnswer(rolesIn(live.roles, org, projectId), r.action, a);
  if (rbac.held) return { kind: 'rbac', outcome: outcome('ALLOWED') };
  return {
    kind: 'rbac',
    outcome: rbac.obligation ? outcome('STEP_UP_REQUIRED', rbac.obligation) : outcome('NOT_PERMITTED'),
  };
}
