// The delegation ceiling (docs/api-roles.md): a caller may define or hand out a role only when it
// holds, in the context involved, every permission the role grants with its composites expanded.
// Holders of the built-in realm-admin role at realm scope hold everything, application
// permissions included. What the caller holds is read live, like api-auth.ts does.

import { one, type Queryable } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import type { Delegator } from './delegator.ts';
import {
  conditionsMet,
  effectiveRolesSql,
  permissionsOf,
  type RoleHolding,
  type SessionAssurance,
} from './effective-roles.ts';
import { BUILTIN_ROLES } from './permissions.ts';

/** Where a role takes effect: the realm, one organization or one project. */
export interface AuthzContext {
  orgId: string | null;
  projectId: string | null;
}

export const REALM_CONTEXT: AuthzContext = { orgId: null, projectId: null };

export interface CallerAuthority {
  permissions: ReadonlySet<string>;
  /** Holds realm-admin at realm scope (with its conditions met). */
  everything: boolean;
}

const ROLES_SQL = `select ${effectiveRolesSql({
  realmId: '$1',
  subjectType: '$2::text',
  subjectId: '$3::text',
  now: '$4::timestamptz',
  orgId: '$5::text',
  projectId: '$6::text',
})} as roles`;

function assuranceOf(caller: Delegator, now: Date): SessionAssurance {
  return {
    mfa: caller.kind === 'service_principal' || caller.sessionMfa,
    authAgeSeconds:
      caller.authTime === null ? null : Math.max(0, Math.floor(now.getTime() / 1000) - caller.authTime),
  };
}

export async function callerAuthority(
  q: Queryable,
  realmId: string,
  caller: Delegator,
  context: AuthzContext,
  now: Date,
): Promise<CallerAuthority> {
  const row = await one<{ roles: RoleHolding[] | null }>(q, ROLES_SQL, [
    realmId,
    caller.kind,
    caller.id,
    now,
    context.orgId,
    context.projectId,
  ]);
  const roles = row.roles ?? [];
  const assurance = assuranceOf(caller, now);
  return {
    permissions: permissionsOf(roles, assurance),
    everything: roles.some(
      (r) =>
        r.builtin &&
        r.name === BUILTIN_ROLES.realmAdmin.name &&
        r.scope_type === 'realm' &&
        conditionsMet(r.conditions, assurance),
    ),
  };
}

/** 403 naming what is missing, when the caller does not hold every permission granted. */
export function ensureWithinCeiling(authority: CallerAuthority, granted: Iterable<string>): void {
  if (authority.everything) return;
  const missing = [...granted].filter((p) => !authority.permissions.has(p)).sort();
  if (missing.length === 0) return;
  const shown = missing.slice(0, 10).join(', ') + (missing.length > 10 ? ', ...' : '');
  throw problem.forbidden(`the role grants permissions you do not hold here: ${shown}`);
}
