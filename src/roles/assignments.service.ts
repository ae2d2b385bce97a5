// Role assignments (docs/api-roles.md): who holds which role where, for how long and under which
// conditions. Each change checks the scope rules, the subject, the delegation ceiling and the
// incompatible roles, then writes the row, audit, outbox event and authorization revision in one
// transaction.

import { inChange } from '../audit/index.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { type AdminChange, invalid, roleProblem } from './admin-call.ts';
import {
  type AssignmentRow,
  deleteAssignment,
  findAssignment,
  heldRoleIds,
  insertAssignment,
} from './assignments.repo.ts';
import { type AffectedSubject, authorizationChanged } from './authz-revision.ts';
import { type AuthzContext, callerAuthority, ensureWithinCeiling } from './delegation.ts';
import type { Delegator } from './delegator.ts';
import { ownerRoleId, requireOtherOwner } from './owner-rule.ts';
import { BUILTIN_ROLES } from './permissions.ts';
import {
  findCurrentMembership,
  findGroupRef,
  findLiveOrganization,
  findLivePrincipal,
  findLiveUser,
  findProjectRef,
  principalAllowedIn,
} from './references.repo.ts';
import { expand, incompatiblePair, permissionsOfSet } from './role-graph.ts';
import type { AssignmentInput } from './roles.decode.ts';
import { findRole, loadRoleGraph, lockAuthorization, type RoleRow } from './roles.repo.ts';
import { announceRemoved, type RoleRoute } from './roles.service.ts';

/** The built-in owner role, whose last holder in an organization keeps it (docs/api-organizations.md). */
const isOwnerRole = async (q: Queryable, realmId: string, roleId: string): Promise<boolean> =>
  (await ownerRoleId(q, realmId)) === roleId;

const contextOf = (scopeType: string, scopeId: string): AuthzContext =>
  scopeType === 'organization'
    ? { orgId: scopeId, projectId: null }
    : scopeType === 'project'
      ? { orgId: null, projectId: scopeId }
      : { orgId: null, projectId: null };

/**
 * realm.roles.write, or org.roles.assign held inside the organization of an organization-scope
 * assignment. Organization routes were authorized by their route options already.
 */
async function ensureMayAssign(
  q: Queryable,
  c: AdminChange,
  route: RoleRoute,
  scope: { type: string; id: string },
): Promise<void> {
  if (route.kind === 'organization' || c.caller.permissions.has('realm.roles.write')) return;
  if (scope.type === 'organization') {
    const there = await callerAuthority(q, c.realmId, c.caller, contextOf(scope.type, scope.id), c.now);
    if (there.everything || there.permissions.has('org.roles.assign')) return;
  }
  throw problem.forbidden('permission realm.roles.write is missing');
}

/** The scope object must exist: a live organization or a project. */
async function ensureScopeExists(q: Queryable, realmId: string, type: string, id: string): Promise<void> {
  if (type === 'organization' && !(await findLiveOrganization(q, realmId, id)))
    throw problem.notFound('no such organization');
  if (type === 'project' && !(await findProjectRef(q, realmId, id)))
    throw problem.notFound('no such project');
}

/** Whether the caller sees every role of the realm, and so may learn why one does not fit. */
const realmWide = (c: AdminChange): boolean =>
  c.caller.permissions.has('realm.roles.write') || c.caller.permissions.has('realm.roles.read');

/** A role is assignable only in its own scope and boundary. */
function ensureRoleFits(c: AdminChange, route: RoleRoute, role: RoleRow, a: AssignmentInput): void {
  // Another organization's role stays invisible on an organization's own routes, and on the realm
  // route to a caller whose standing is inside one organization only.
  const boundary = route.kind === 'organization' ? route.orgId : realmWide(c) ? null : a.scopeId;
  if (boundary !== null && role.organization_id !== null && role.organization_id !== boundary)
    throw problem.notFound('no such role');
  if (role.scope !== a.scopeType)
    throw invalid(
      'role_id',
      'scope_mismatch',
      `a ${role.scope} role cannot be assigned at ${a.scopeType} scope`,
    );
  if (role.organization_id !== null && role.organization_id !== a.scopeId)
    throw invalid('role_id', 'scope_mismatch', 'a role of one organization is assignable only inside it');
  if (role.scope === 'project' && role.project_id !== a.scopeId)
    throw invalid('role_id', 'scope_mismatch', 'a project role is assignable only in its project');
}

/** The subject must exist, and inside an organization it must belong there. */
async function ensureSubjectFits(tx: Tx, realmId: string, a: AssignmentInput): Promise<void> {
  const inOrg = a.scopeType === 'organization' ? a.scopeId : null;
  if (a.subjectType === 'user') {
    if (!(await findLiveUser(tx, realmId, a.subjectId))) throw problem.notFound('no such user');
    if (inOrg && !(await findCurrentMembership(tx, realmId, inOrg, a.subjectId)))
      throw problem.conflict('the user is not a member of the organization');
  } else if (a.subjectType === 'service_principal') {
    const p = await findLivePrincipal(tx, realmId, a.subjectId);
    if (!p) throw problem.notFound('no such service principal');
    if (inOrg && !principalAllowedIn(p, inOrg))
      throw problem.conflict('the service principal may not act in the organization');
  } else {
    const g = await findGroupRef(tx, realmId, a.subjectId);
    if (!g) throw problem.notFound('no such group');
    // Another organization's group stays invisible to an assignment inside this one.
    if (g.organization_id !== null && inOrg !== null && g.organization_id !== inOrg)
      throw problem.notFound('no such group');
    if (g.organization_id !== null && g.organization_id !== inOrg)
      throw invalid('subject_id', 'scope_mismatch', "an organization's group is assignable only inside it");
  }
}

export const affectedBy = (subjectType: string, subjectId: string): AffectedSubject[] =>
  subjectType === 'user' || subjectType === 'service_principal' ? [{ type: subjectType, id: subjectId }] : [];

export async function assignRole(
  db: Db,
  c: AdminChange,
  route: RoleRoute,
  a: AssignmentInput,
): Promise<AssignmentRow> {
  return inChange(db, c, async (tx, record) => {
    await ensureMayAssign(tx, c, route, { type: a.scopeType, id: a.scopeId });
    await lockAuthorization(tx, c.realmId);
    await ensureScopeExists(tx, c.realmId, a.scopeType, a.scopeId);
    const role = await findRole(tx, c.realmId, a.roleId);
    if (!role) throw problem.notFound('no such role');
    ensureRoleFits(c, route, role, a);
    await ensureSubjectFits(tx, c.realmId, a);

    const graph = await loadRoleGraph(tx, c.realmId);
    const granted = expand(graph, [role.id]);
    const authority = await callerAuthority(
      tx,
      c.realmId,
      c.caller,
      contextOf(a.scopeType, a.scopeId),
      c.now,
    );
    ensureWithinCeiling(authority, permissionsOfSet(graph, granted));
    const subject = { type: a.subjectType, id: a.subjectId };
    const held = expand(
      graph,
      await heldRoleIds(tx, c.realmId, subject, { type: a.scopeType, id: a.scopeId }, c.now),
    );
    const pair = incompatiblePair(graph, granted, held);
    if (pair) {
      const name = (id: string) => graph.get(id)?.name ?? id;
      throw roleProblem.incompatible(
        `${name(pair[0])} and ${name(pair[1])} cannot be held together in this scope`,
      );
    }

    const id = await insertAssignment(tx, c.realmId, a, c.now);
    if (id === null) throw problem.conflict('the subject already holds this role in this scope');
    const privileged = [...granted].some(
      (r) => graph.get(r)?.builtin && graph.get(r)?.name === BUILTIN_ROLES.realmAdmin.name,
    );
    const orgId = a.scopeType === 'organization' ? a.scopeId : null;
    await record.audit('role.assigned', {
      category: 'security',
      subject,
      target: { type: 'role', id: role.id },
      orgId,
      ...(privileged ? { signal: 'privileged_grant' as const } : {}),
      reason: a.reason || null,
      data: { assignment_id: id, role_id: role.id, scope_type: a.scopeType, scope_id: a.scopeId || null },
    });
    await record.event(
      'authorization.role.assigned',
      { subject_id: a.subjectId, role_id: role.id, assignment_id: id },
      orgId,
    );
    await authorizationChanged(tx, c.realmId, affectedBy(a.subjectType, a.subjectId));
    const row = await findAssignment(tx, c.realmId, id);
    if (!row) throw new Error('assignment vanished inside its own transaction');
    return row;
  });
}

/** An assignment as the route may see it: organization routes see only their organization's. */
export async function getAssignment(
  q: Queryable,
  realmId: string,
  route: RoleRoute,
  id: string,
): Promise<AssignmentRow> {
  const a = await findAssignment(q, realmId, id);
  if (
    !a ||
    (route.kind === 'organization' && !(a.scope_type === 'organization' && a.scope_id === route.orgId))
  )
    throw problem.notFound('no such role assignment');
  return a;
}

async function mayUnassign(
  q: Queryable,
  c: AdminChange,
  caller: Delegator,
  a: AssignmentRow | null,
): Promise<boolean> {
  if (caller.permissions.has('realm.roles.write')) return true;
  if (a?.scope_type !== 'organization') return false;
  const there = await callerAuthority(q, c.realmId, caller, contextOf(a.scope_type, a.scope_id), c.now);
  return there.everything || there.permissions.has('org.roles.assign');
}

export async function unassignRole(db: Db, c: AdminChange, route: RoleRoute, id: string): Promise<void> {
  await inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    if (
      route.kind === 'realm' &&
      !(await mayUnassign(tx, c, c.caller, await findAssignment(tx, c.realmId, id)))
    )
      throw problem.forbidden('permission realm.roles.write is missing');
    const a = await getAssignment(tx, c.realmId, route, id);
    if (a.membership_id !== null)
      throw problem.conflict('this assignment comes with a membership; change the membership instead');
    if (
      a.subject_type === 'user' &&
      a.scope_type === 'organization' &&
      (await isOwnerRole(tx, c.realmId, a.role_id))
    )
      await requireOtherOwner(tx, c.realmId, a.scope_id, a.subject_id, c.now);
    const removed = await deleteAssignment(tx, c.realmId, id);
    await announceRemoved(record, removed);
    await record.audit('role.unassigned', {
      category: 'security',
      subject: { type: a.subject_type, id: a.subject_id },
      target: { type: 'role', id: a.role_id },
      orgId: a.scope_type === 'organization' ? a.scope_id : null,
      data: {
        assignment_id: a.id,
        role_id: a.role_id,
        scope_type: a.scope_type,
        scope_id: a.scope_id || null,
      },
    });
    await authorizationChanged(tx, c.realmId, affectedBy(a.subject_type, a.subject_id));
  });
}
