// Role definitions (docs/api-roles.md): realm-wide roles, roles of one organization and roles of
// one project. Each change validates the role graph, applies the delegation ceiling, and writes
// the row, its audit record and the authorization revision in one transaction.
import type { AuditType } from '../audit/audit.types.ts';
import { inChange, type Recorder } from '../audit/index.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { type AdminChange, ifMatchSatisfied, invalid, invalidAll, roleProblem } from './admin-call.ts';
import { deleteAssignmentsOfRole, directHolders, type RemovedAssignment } from './assignments.repo.ts';
import { authorizationChanged } from './authz-revision.ts';
import { type AuthzContext, callerAuthority, ensureWithinCeiling, REALM_CONTEXT } from './delegation.ts';
import { findProjectRef } from './references.repo.ts';
import { expand, type GraphRole, permissionsOfSet, roleGraphProblems } from './role-graph.ts';
import { resolvePermissions } from './role-permissions.ts';
import type { RoleInput } from './roles.decode.ts';
import {
  deleteRole,
  findRole,
  forgetRoleInOthers,
  insertRole,
  loadRoleGraph,
  lockAuthorization,
  lockRole,
  newRoleId,
  type RoleRow,
  type RoleValues,
  registeredPermissions,
  replaceRole,
} from './roles.repo.ts';

/** Which API the request came through: realm-wide routes, or one organization's routes. */
export type RoleRoute = { kind: 'realm' } | { kind: 'organization'; orgId: string };

/** Whether the route may see the role: organization routes see only that organization's roles. */
export function visibleThrough(route: RoleRoute, role: Pick<RoleRow, 'organization_id'>): boolean {
  return route.kind === 'realm' ? role.organization_id === null : role.organization_id === route.orgId;
}

export async function getRole(q: Queryable, realmId: string, route: RoleRoute, id: string): Promise<RoleRow> {
  const role = await findRole(q, realmId, id);
  if (!role || !visibleThrough(route, role)) throw problem.notFound('no such role');
  return role;
}

const contextOf = (r: Pick<RoleValues, 'organizationId' | 'projectId'>): AuthzContext =>
  r.organizationId !== null
    ? { orgId: r.organizationId, projectId: null }
    : r.projectId !== null
      ? { orgId: null, projectId: r.projectId }
      : REALM_CONTEXT;

/** Where the new role lives, from the route and the body. */
async function placementOf(
  q: Queryable,
  realmId: string,
  route: RoleRoute,
  input: RoleInput,
): Promise<Pick<RoleValues, 'scope' | 'organizationId' | 'projectId'>> {
  if (route.kind === 'organization') {
    if (input.scope !== undefined && input.scope !== 'organization')
      throw invalid('scope', 'not_allowed', 'roles of an organization have scope organization');
    if (input.projectId !== undefined)
      throw invalid('project_id', 'not_allowed', 'not for organization roles');
    return { scope: 'organization', organizationId: route.orgId, projectId: null };
  }
  const scope = input.scope ?? 'realm';
  if (scope !== 'project') {
    if (input.projectId !== undefined)
      throw invalid('project_id', 'not_allowed', 'only roles with scope project name a project');
    return { scope, organizationId: null, projectId: null };
  }
  if (input.projectId === undefined)
    throw invalid('project_id', 'required', 'a project role names its project');
  if (!(await findProjectRef(q, realmId, input.projectId)))
    throw invalid('project_id', 'unknown_project', 'no such project');
  return { scope, organizationId: null, projectId: input.projectId };
}

/**
 * Resolves permissions, checks the graph with the role as it would be stored, and applies the
 * ceiling; returns the values to store.
 */
async function validated(
  tx: Tx,
  c: AdminChange,
  id: string,
  placement: Pick<RoleValues, 'scope' | 'organizationId' | 'projectId'>,
  input: RoleInput,
): Promise<RoleValues> {
  const registered = await registeredPermissions(tx, c.realmId, input.permissions);
  const perms = resolvePermissions(placement.scope, input.permissions, registered);
  if (perms.errors.length > 0) throw invalidAll(perms.errors);
  const values: RoleValues = {
    ...placement,
    name: input.name,
    description: input.description ?? '',
    permissions: perms.names,
    compositeRoleIds: input.compositeRoleIds,
    incompatibleRoleIds: input.incompatibleRoleIds,
  };
  const graph = await loadRoleGraph(tx, c.realmId);
  const candidate: GraphRole = {
    id,
    name: values.name,
    builtin: false,
    scope: values.scope,
    organizationId: values.organizationId,
    projectId: values.projectId,
    permissions: values.permissions,
    composites: values.compositeRoleIds,
    incompatible: values.incompatibleRoleIds,
  };
  graph.set(id, candidate);
  const errors = roleGraphProblems(graph, candidate);
  if (errors.length > 0) throw invalidAll(errors);
  const authority = await callerAuthority(tx, c.realmId, c.caller, contextOf(values), c.now);
  ensureWithinCeiling(authority, permissionsOfSet(graph, expand(graph, [id])));
  return values;
}

const nameTaken = () => problem.conflict('a role with this name exists in this boundary');

const auditRole = (record: Recorder, type: AuditType, role: RoleRow, data: Record<string, unknown> = {}) =>
  record.audit(type, {
    category: 'configuration',
    target: { type: 'role', id: role.id },
    orgId: role.organization_id,
    data: { name: role.name, scope: role.scope, version: role.version, ...data },
  });

export async function createRole(
  db: Db,
  c: AdminChange,
  route: RoleRoute,
  input: RoleInput,
): Promise<RoleRow> {
  return inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    const id = newRoleId(c.now);
    const values = await validated(tx, c, id, await placementOf(tx, c.realmId, route, input), input);
    let role: RoleRow;
    try {
      role = await insertRole(tx, c.realmId, id, values, c.now);
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken();
      throw e;
    }
    await auditRole(record, 'role.created', role);
    await authorizationChanged(tx, c.realmId);
    return role;
  });
}

/** PUT: the whole definition; scope and project_id may only repeat their current values. */
export async function replaceRoleDefinition(
  db: Db,
  c: AdminChange,
  route: RoleRoute,
  id: string,
  input: RoleInput,
  ifMatch: string | string[] | undefined,
): Promise<RoleRow> {
  return inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    const current = await lockRole(tx, c.realmId, id);
    if (!current || !visibleThrough(route, current)) throw problem.notFound('no such role');
    if (current.builtin) throw roleProblem.builtinImmutable();
    if (!ifMatchSatisfied(ifMatch, current.version)) throw problem.preconditionFailed();
    if (input.scope !== undefined && input.scope !== current.scope)
      throw invalid('scope', 'immutable', 'the scope of a role cannot change');
    if (input.projectId !== undefined && input.projectId !== current.project_id)
      throw invalid('project_id', 'immutable', 'the project of a role cannot change');
    const placement = {
      scope: current.scope,
      organizationId: current.organization_id,
      projectId: current.project_id,
    };
    const values = await validated(tx, c, id, placement, input);
    let role: RoleRow;
    try {
      role = await replaceRole(tx, c.realmId, id, values, c.now);
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken();
      throw e;
    }
    await auditRole(record, 'role.updated', role);
    const graph = await loadRoleGraph(tx, c.realmId);
    const containing = [...graph.values()].filter((r) => expand(graph, [r.id]).has(id)).map((r) => r.id);
    await authorizationChanged(tx, c.realmId, await directHolders(tx, c.realmId, containing));
    return role;
  });
}

/** authorization.role.unassigned for each removed assignment; org_id only when organization-scoped. */
export async function announceRemoved(
  record: Recorder,
  removed: readonly RemovedAssignment[],
): Promise<void> {
  for (const a of removed) {
    await record.event(
      'authorization.role.unassigned',
      { subject_id: a.subject_id, role_id: a.role_id },
      a.scope_type === 'organization' ? a.scope_id : null,
    );
  }
}

/** Removes the role, its assignments (announced one by one) and its place in other roles. */
export async function removeRole(db: Db, c: AdminChange, route: RoleRoute, id: string): Promise<void> {
  await inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    const role = await lockRole(tx, c.realmId, id);
    if (!role || !visibleThrough(route, role)) throw problem.notFound('no such role');
    if (role.builtin) throw roleProblem.builtinImmutable();
    const graph = await loadRoleGraph(tx, c.realmId);
    const containing = [...graph.values()].filter((r) => expand(graph, [r.id]).has(id)).map((r) => r.id);
    const affected = await directHolders(tx, c.realmId, containing);
    const removed = await deleteAssignmentsOfRole(tx, c.realmId, id);
    await announceRemoved(record, removed);
    const touched = await forgetRoleInOthers(tx, c.realmId, id, c.now);
    await deleteRole(tx, c.realmId, id);
    await auditRole(record, 'role.deleted', role, {
      assignments_removed: removed.length,
      roles_updated: touched,
    });
    await authorizationChanged(tx, c.realmId, affected);
  });
}
