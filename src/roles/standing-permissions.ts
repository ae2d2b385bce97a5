// What a subject holds with no session in front of it (spec doc 2, Jobs and exports: the worker
// re-checks a job's requester when the job runs): permissions of unconditional assignments only,
// and nothing at all while the account or principal may not hold roles.
import type { Actor } from '../kernel/call.ts';
import { maybeOne, type Queryable } from '../platform/db/db.ts';
import { mayHoldRoles } from '../users/account.states.ts';
import { effectiveRolesSql, permissionsOf, type RoleHolding } from './effective-roles.ts';
import { BUILTIN_ROLES } from './permissions.ts';

export interface Standing {
  /** The account or principal exists and may hold roles. */
  active: boolean;
  permissions: ReadonlySet<string>;
  /**
   * Holds the built-in realm-admin role at realm scope unconditionally: the delegation ceiling of a
   * job (user.import) lets it hand out any role, as roles/delegation.ts does for a live caller.
   */
  everything?: boolean;
}

/**
 * The standing of `subject` at realm scope and, with `orgId`, inside that organization (also while
 * it is being deleted: the deletion job re-checks its requester there).
 */
export async function standingOf(
  q: Queryable,
  realmId: string,
  subject: Actor,
  orgId: string | null,
  now: Date,
): Promise<Standing> {
  if ((subject.type !== 'user' && subject.type !== 'service_principal') || subject.id === null)
    return { active: false, permissions: new Set() };
  const stateSql =
    subject.type === 'user'
      ? 'select state from users where realm_id = $1 and id = $3'
      : 'select state from service_principals where realm_id = $1 and id = $3';
  const row = await maybeOne<{ state: string | null; roles: RoleHolding[] | null }>(
    q,
    `select (${stateSql}) as state, ${effectiveRolesSql({
      realmId: '$1',
      subjectType: '$2',
      subjectId: '$3',
      now: '$4',
      orgId: '$5::text',
      projectId: 'null::text',
      orgStates: ['active', 'deleting'],
    })} as roles`,
    [realmId, subject.type, subject.id, now, orgId],
  );
  const state = row?.state ?? null;
  const active = subject.type === 'user' ? mayHoldRoles(state) : state === 'active';
  if (!active) return { active: false, permissions: new Set() };
  const roles = row?.roles ?? [];
  const everything = roles.some(
    (r) =>
      r.builtin &&
      r.name === BUILTIN_ROLES.realmAdmin.name &&
      r.scope_type === 'realm' &&
      (!r.conditions || Object.keys(r.conditions).length === 0),
  );
  return { active: true, permissions: permissionsOf(roles), everything };
}
