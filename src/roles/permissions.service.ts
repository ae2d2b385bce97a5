// Application permissions (docs/api-roles.md): names an application defines and roles carry.
// Built-in names live in code (src/authz/permissions.ts) and are never stored.
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { type AdminChange, auditChange } from './admin-call.ts';
import type { PermissionInput } from './roles.decode.ts';
import {
  deletePermission,
  findPermission,
  insertPermission,
  lockAuthorization,
  type PermissionRow,
  rolesHoldingPermission,
} from './roles.repo.ts';

export async function createPermission(
  db: Db,
  c: AdminChange,
  input: PermissionInput,
): Promise<PermissionRow> {
  return db.tx(async (tx) => {
    const row = await insertPermission(tx, c.realmId, input, c.now);
    if (!row) throw problem.conflict('a permission with this name exists (names ignore case)');
    await auditChange(
      tx,
      c,
      'permission.created',
      { target: { type: 'permission', id: row.name } },
      { name: row.name, sensitivity: row.sensitivity },
    );
    return row;
  });
}

export async function removePermission(db: Db, c: AdminChange, name: string): Promise<void> {
  await db.tx(async (tx) => {
    // Taken first so no role can pick up the permission between the check and the delete.
    await lockAuthorization(tx, c.realmId);
    const row = await findPermission(tx, c.realmId, name);
    if (!row) throw problem.notFound('no such permission');
    const users = await rolesHoldingPermission(tx, c.realmId, row.name);
    if (users.length > 0) {
      throw problem.conflict(
        `roles still hold this permission (${users.map((r) => r.name).join(', ')}); remove it from them first`,
      );
    }
    await deletePermission(tx, c.realmId, row.name);
    await auditChange(
      tx,
      c,
      'permission.deleted',
      { target: { type: 'permission', id: row.name } },
      { name: row.name },
    );
  });
}
