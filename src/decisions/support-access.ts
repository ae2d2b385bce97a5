// Support access rules of a decision (docs/authorization.md, "Support access"; docs/
// support-access.md): a support token acts as the customer only within the resource's
// impersonation_policy. Pure; the facts come from the decision's one statement. Past these rules
// the check is evaluated as usual, with the customer's roles.

import type { SupportFacts } from '../access/token-liveness.ts';
import type { ImpersonationPolicy, ResourceScope } from '../resources/resource.ts';
import { isBuiltinPermissionName } from '../roles/permissions.ts';
import { type Outcome, outcome } from './decision.ts';

const asList = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

/** The stored impersonation_policy, or null when it is missing or not an object. */
function policyOf(v: unknown): ImpersonationPolicy | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const p = v as Record<string, unknown>;
  return {
    allowedScopes: asList(p.allowedScopes),
    writeScopes: asList(p.writeScopes),
    writeActions: asList(p.writeActions),
    supportClientIds: asList(p.supportClientIds),
    contractVersion: typeof p.contractVersion === 'string' ? p.contractVersion : '',
  };
}

/**
 * The resource scopes that require the action, as support sees them: `read` are the read-only
 * support scopes (in allowed_scopes, not in write_scopes), `write` the write scopes; with
 * `carried`, only the scopes the token carries.
 */
function requiredBy(
  policy: ImpersonationPolicy,
  scopes: readonly ResourceScope[],
  action: string,
  kind: 'read' | 'write',
  carried?: readonly string[],
): boolean {
  return scopes.some(
    (s) =>
      (carried === undefined || carried.includes(s.name)) &&
      (kind === 'write'
        ? policy.writeScopes.includes(s.name)
        : policy.allowedScopes.includes(s.name) && !policy.writeScopes.includes(s.name)) &&
      (s.requiredPermissions ?? []).includes(action),
  );
}

/**
 * The support rule that refuses the action, or null to evaluate it as usual. `carried` are the
 * token's scopes: the grant reaches only what they require.
 */
export function supportAccessOutcome(
  support: SupportFacts,
  scopes: readonly ResourceScope[],
  sensitivities: Readonly<Record<string, string>>,
  action: string,
  carried: readonly string[],
): Outcome | null {
  const policy = policyOf(support.policy);
  if (!support.impersonationEnabled || !policy) return outcome('SUPPORT_ACCESS_FORBIDDEN_ACTION');
  // The service's own permissions and privileged application permissions are never delegated.
  if (isBuiltinPermissionName(action) || sensitivities[action] === 'privileged')
    return outcome('SUPPORT_ACCESS_FORBIDDEN_ACTION');
  if (requiredBy(policy, scopes, action, 'read', carried)) return null;
  // A read that only scopes the token lacks would cover: outside this grant, whatever its kind.
  if (requiredBy(policy, scopes, action, 'read')) return outcome('SUPPORT_ACCESS_FORBIDDEN_ACTION');
  // Everything else is a write, so an action no scope names is never taken for a read.
  if (!support.write) return outcome('SUPPORT_ACCESS_READ_ONLY');
  if (!policy.writeActions.includes(action)) return outcome('SUPPORT_ACCESS_WRITE_NOT_ALLOWLISTED');
  if (!requiredBy(policy, scopes, action, 'write', carried))
    return outcome('SUPPORT_ACCESS_FORBIDDEN_ACTION');
  return null;
}
