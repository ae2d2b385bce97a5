// Support access rules of a decision (docs/authorization.md, "Support access"; docs/
// support-access.md): a support token acts as the customer only within the resource's
// impersonation_policy. Pure; the facts come from the decision's one statement. Past these rules
// the check is evaluated as usual, with the customer's roles.
import { isBuiltinPermissionName } from '../authz/permissions.ts';
import type { SupportFacts } from '../oauth/tokens/token-liveness.ts';
import type { ImpersonationPolicy, ResourceScope } from '../resources/resource.ts';
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
 * A read is an action some read-only support scope (in allowed_scopes, not in write_scopes)
 * requires; everything else is a write, so an action no scope names is never taken for a read.
 */
export function isSupportRead(
  policy: ImpersonationPolicy,
  scopes: readonly ResourceScope[],
  action: string,
): boolean {
  return scopes.some(
    (s) =>
      policy.allowedScopes.includes(s.name) &&
      !policy.writeScopes.includes(s.name) &&
      (s.requiredPermissions ?? []).includes(action),
  );
}

/** The support rule that refuses the action, or null to evaluate it as usual. */
export function supportAccessOutcome(
  support: SupportFacts,
  scopes: readonly ResourceScope[],
  sensitivities: Readonly<Record<string, string>>,
  action: string,
): Outcome | null {
  const policy = policyOf(support.policy);
  if (!support.impersonationEnabled || !policy) return outcome('SUPPORT_ACCESS_FORBIDDEN_ACTION');
  // The service's own permissions and privileged application permissions are never delegated.
  if (isBuiltinPermissionName(action) || sensitivities[action] === 'privileged')
    return outcome('SUPPORT_ACCESS_FORBIDDEN_ACTION');
  if (isSupportRead(policy, scopes, action)) return null;
  if (!support.write) return outcome('SUPPORT_ACCESS_READ_ONLY');
  if (!policy.writeActions.includes(action)) return outcome('SUPPORT_ACCESS_WRITE_NOT_ALLOWLISTED');
  return null;
}
