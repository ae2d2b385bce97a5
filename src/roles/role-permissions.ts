// Which permissions a role may carry (docs/api-roles.md, "Permissions a role may hold"). A role
// assigned inside an organization or project must never carry realm-wide power: api-auth.ts
// counts organization-held permissions on organization routes, so a realm.* permission there
// would let an organization administrator act on the whole realm.

import type { FieldError } from '../platform/http/problem.ts';
import { isBuiltinPermissionName, isKnownBuiltinPermission, type RoleScope } from './permissions.ts';

export function allowedInScope(scope: RoleScope, name: string): boolean {
  if (!isBuiltinPermissionName(name)) return true;
  if (scope === 'realm') return true;
  return scope === 'organization' && name.startsWith('org.');
}

/**
 * Resolves each requested name: built-in names must be known to the service; others must be
 * registered application permissions (matched ignoring case, stored in their registered form).
 */
export function resolvePermissions(
  scope: RoleScope,
  requested: readonly string[],
  registered: ReadonlyMap<string, string>,
): { names: string[]; errors: FieldError[] } {
  const names: string[] = [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  requested.forEach((name, i) => {
    const field = `permissions[${i}]`;
    const resolved = isBuiltinPermissionName(name)
      ? isKnownBuiltinPermission(name)
        ? name
        : null
      : (registered.get(name.toLowerCase()) ?? null);
    if (resolved === null) {
      errors.push({
        field,
        code: 'unknown_permission',
        detail: `${name.slice(0, 128)} is not a known permission`,
      });
    } else if (!allowedInScope(scope, resolved)) {
      errors.push({ field, code: 'not_allowed_in_scope', detail: `a ${scope} role cannot hold ${resolved}` });
    } else if (!seen.has(resolved.toLowerCase())) {
      seen.add(resolved.toLowerCase());
      names.push(resolved);
    }
  });
  return { names, errors };
}
