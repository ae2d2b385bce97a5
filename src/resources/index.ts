// The resources context's public surface: resource definitions and client resource grants.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export { builtinResources } from './builtin-resources.ts';
export { type GrantSpec, grantProblems, grantUnchanged, parseGrantSpec } from './grant-spec.ts';
export type { ExchangePolicy, ResourceDefinition } from './resource.ts';
export { checkResourceInput, type ResourceInput } from './resources.decode.ts';
export type { GrantRecord, GrantRow, RealmRef, ResourceRow } from './resources.repo.ts';
export {
  findResourceByAudience,
  findResourceGrant,
  grantFromRow,
  listGrantsOfRealm,
  listResourceRows,
  resourceFromRow,
} from './resources.repo.ts';
export {
  createResourceInTx,
  type ResourceCall,
  replaceResourceInTx,
  setGrantInTx,
} from './resources.service.ts';
