import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { BUILTIN_ROLES } from './permissions.ts';

/** Creates the built-in roles of a new realm; returns their ids by role name. */
export async function insertBuiltinRoles(tx: Tx, realmId: string, now: Date): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const role of Object.values(BUILTIN_ROLES)) {
    const id = newId('rol', now.getTime());
    await tx.query(
      `insert into roles (realm_id, id, name, description, builtin, scope, created_at, updated_at)
       values ($1, $2, $3, $4, true, $5, $6, $6)`,
      [realmId, id, role.name, role.description, role.scope, now],
    );
    ids.set(role.name, id);
  }
  return ids;
}

/** A realm-wide role (realm or organization scope) by name; roles of one organization or project are not found. */
export const findRoleByName = (q: Queryable, realmId: string, name: string) =>
  maybeOne<{ id: string; name: string; builtin: boolean }>(
    q,
    `select id, name, builtin from roles where realm_id = $1 and lower(name) = lower($2)
        and organization_id is null and project_id is null`,
    [realmId, name],
  );

export async function assignRealmRole(
  tx: Tx,
  a: {
    realmId: string;
    roleId: string;
    subjectType: 'user' | 'service_principal';
    subjectId: string;
    source: string;
    reason?: string;
  },
  now: Date,
): Promise<string> {
  const id = newId('ras', now.getTime());
  await tx.query(
    `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source, reason, created_at)
     values ($1, $2, $3, $4, $5, 'realm', '', $6, $7, $8)`,
    [a.realmId, id, a.roleId, a.subjectType, a.subjectId, a.source, a.reason ?? null, now],
  );
  return id;
}
