// The support grants context's public surface: grant rows and handoff codes.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export {
  findPreference,
  findSupportGrant,
  insertSupportGrant,
  listGrantsOnAccount,
  listSupportGrants,
  lockGrantByHandoff,
  lockSupportGrant,
  markHandoffUsed,
  setPreference,
} from './support-grants.repo.ts';
