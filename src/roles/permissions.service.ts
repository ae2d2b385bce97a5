// Application permissions (docs/api-roles.md): names an application defines and roles carry.
// Built-in names live in code (src/authz/permissions.ts) and are never stored.
import { inChange } from '../audit/index.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import type { AdminChange } from './admin-call.ts';
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
  return inChange(db, c, async (tx, record) => {
    const row = await insertPermission(tx, c.realmId, input, c.now);
    if (!row) throw problem.conflict('a permission with this name exists (names ignore case)');
    await record.audit('permission.created', {
      category: 'configuration',
      target: { type: 'permission', id: row.name },
      data: { name: row.name, sensitivity: row.sensitivity },
    });
    return row;
  });
}

export async function removePermission(db: Db, c: AdminChange, name: string): Promise<void> {
  await inChange(db, c, async (tx, record) => {
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
    await record.audit('permission.deleted', {
      category: 'configuration',
      target: { type: 'permission', id: row.name },
      data: { name: row.name },
    });
  });
}
