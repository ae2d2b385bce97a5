// Changing a realm's policy (spec doc 1, Policy; Import semantics 4): the patch is checked, merged
// over the stored policy (objects member by member, lists whole), the result checked as a whole
// and, when it differs, stored as a new revision audited as realm.policy.updated with the
// configuration_change signal, all in the caller's transaction.

import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { type Problem, problem } from '../platform/http/problem.ts';
import { currentPolicy, insertPolicyRevision } from './policy.repo.ts';
import { fieldOf, type Json, type PolicyIssue, type PolicyRuleOptions, planPolicy } from './policy-check.ts';
import { defaultRealmPolicy } from './policy-defaults.ts';

export { mergePolicy } from './policy-check.ts';

export interface PolicyChange {
  /** Members to change; null resets the policy to the defaults of a new realm. */
  patch: unknown;
  /** When given and non-zero, the revision the change was made against (412 otherwise). */
  expectedRevision?: number | undefined;
  /** The audit record's reason, e.g. `configuration import`. */
  reason: string;
}

export interface PolicyChangeResult {
  revision: number;
  previousRevision: number;
  changed: boolean;
  policy: Json;
}

/** The problem for issues of a policy given under `prefix` (400 for unknown members, else 422). */
export function policyProblem(issues: readonly PolicyIssue[], prefix = 'policy'): Problem {
  const errors = issues.map((i) => ({ field: fieldOf(i.path, prefix), code: i.code, detail: i.detail }));
  if (issues.some((i) => i.code === 'unknown_member' || i.code === 'duplicate'))
    return problem.invalidRequest('the policy has unknown members', errors);
  return problem.validation(errors, 'the policy has invalid values');
}

/** Fails with 412 when an expected revision is given, non-zero and not the current one. */
export function ensureExpectedRevision(expected: number | undefined, current: number): void {
  if (expected !== undefined && expected !== 0 && expected !== current)
    throw problem.preconditionFailed(`the policy revision is ${current}, not ${expected}`);
}

export async function changePolicyInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  change: PolicyChange,
  opts: PolicyRuleOptions,
): Promise<PolicyChangeResult> {
  await tx.query('select 1 from realms where id = $1 for update', [call.realmId]);
  const current = await currentPolicy(tx, call.realmId);
  ensureExpectedRevision(change.expectedRevision, current.revision);
  const plan = planPolicy(current.document, change.patch, defaultRealmPolicy(), opts);
  if (plan.issues.length > 0) throw policyProblem(plan.issues);
  const unchanged = { revision: current.revision, previousRevision: current.revision, changed: false };
  if (!plan.changed) return { ...unchanged, policy: current.document };
  const revision = current.revision + 1;
  await insertPolicyRevision(tx, call.realmId, revision, plan.merged, change.reason, call.actor.id, call.now);
  await record.audit('realm.policy.updated', {
    category: 'configuration',
    target: { type: 'realm', id: call.realmId },
    signal: 'configuration_change',
    reason: change.reason,
    data: { policy_revision: revision, previous_revision: current.revision, sections: plan.sections },
  });
  return { revision, previousRevision: current.revision, changed: true, policy: plan.merged };
}

/** One policy change in its own transaction. */
export const changePolicy = (db: Db, call: Call, change: PolicyChange, opts: PolicyRuleOptions) =>
  inChange(db, call, (tx, record) => changePolicyInTx(tx, record, call, change, opts));
