// The roles context's public surface: roles, assignments and the references they check.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export { deleteAssignmentsOfSubject, heldRoleIds } from './assignments.repo.ts';
export { assignRealmRole, findRoleByName, insertBuiltinRoles } from './builtin-roles.repo.ts';
export {
  findCurrentMembership,
  findLiveOrganization,
  findLivePrincipal,
  findLiveUser,
  liveOrganizationIds,
  principalAllowedIn,
} from './references.repo.ts';
export { loadRoleGraph, lockAuthorization } from './roles.repo.ts';
export { type Standing, standingOf } from './standing-permissions.ts';
