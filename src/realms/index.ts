// The realms context's public surface: realm rows and the realm policy.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export { brandName, brandNameOf } from './branding.ts';
export type { RealmPolicy } from './policy.repo.ts';
export { currentPolicy, policyJsonSql, policyOfJson, policyValue, relatedOriginsOf } from './policy.repo.ts';
export {
  changePolicy,
  changePolicyInTx,
  ensureExpectedRevision,
  type PolicyChange,
  type PolicyChangeResult,
  policyProblem,
} from './policy.service.ts';
export {
  checkPolicyPatch,
  fieldOf,
  type Json,
  jsonPointer,
  mergePolicy,
  type PolicyIssue,
  type PolicyPlan,
  type PolicyRuleOptions,
  planPolicy,
  policyRulesOf,
  samePolicy,
} from './policy-check.ts';
export { defaultRealmPolicy } from './policy-defaults.ts';
export { STANDARD_PROFILE_ATTRIBUTES } from './policy-schema.ts';
export type { RealmRow } from './realm.repo.ts';
export { findRealmById, findRealmByName, insertRealm, RealmExistsError } from './realm.repo.ts';
