// The resources context's public surface: resource definitions and client resource grants.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export type { GrantRow, RealmRef, ResourceRow } from './resources.repo.ts';
export {
  findResourceByAudience,
  findResourceGrant,
  grantFromRow,
  resourceFromRow,
} from './resources.repo.ts';
