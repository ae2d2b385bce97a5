// The organizations context's public surface for other folders (docs/architecture.md, import
// rules): reading one organization (audit retention reads its audit_retention_days).

export { joinFromDirectory, joinThroughFederation, leaveFromDirectory } from './federated-membership.ts';
export {
  type ImportedMembership,
  type ImportOrganization,
  insertImportedMemberships,
  type OrgRef,
  orgRefKey,
  resolveImportOrganizations,
} from './membership-import.ts';
export { addMember as addOrganizationMember } from './memberships.service.ts';
export { changeOrganizationStateInTx } from './organization-state.service.ts';
export { findOrganization } from './organizations.repo.ts';
export type { OrgCall } from './organizations.types.ts';
