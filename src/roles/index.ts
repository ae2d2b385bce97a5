// The roles context's public surface: roles, assignments and the references they check.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export type { AdminChange } from './admin-call.ts';
export { etagOf, ifMatchSatisfied } from './admin-call.ts';
export { deleteAssignmentsOfSubject, heldRoleIds } from './assignments.repo.ts';
export { unassignRole } from './assignments.service.ts';
export { assignRealmRole, findRoleByName, insertBuiltinRoles } from './builtin-roles.repo.ts';
export type { Delegator } from './delegator.ts';
export { createPermission } from './permissions.service.ts';
export { isBuiltinPermissionName, isKnownBuiltinPermission } from './permissions.ts';
export {
  findCurrentMembership,
  findLiveOrganization,
  findLivePrincipal,
  findLiveUser,
  liveOrganizationIds,
  principalAllowedIn,
} from './references.repo.ts';
export { decodePermission, decodeRole, type PermissionInput, type RoleInput } from './roles.decode.ts';
export {
  listPermissions,
  listRoles,
  loadRoleGraph,
  lockAuthorization,
  type PermissionRow,
  type RoleRow,
  registeredPermissions,
} from './roles.repo.ts';
export { createRole, getRole, replaceRoleDefinition } from './roles.service.ts';
export { type Standing, standingOf } from './standing-permissions.ts';
