// SQL for roles and application permissions (migrations 0001, 0007, 0009).

import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { RoleScope } from './permissions.ts';
import type { GraphRole, RoleGraph } from './role-graph.ts';

export interface RoleRow {
  id: string;
  name: string;
  description: string;
  builtin: boolean;
  scope: RoleScope;
  organization_id: string | null;
  project_id: string | null;
  permissions: string[];
  composite_role_ids: string[];
  incompatible_role_ids: string[];
  version: number;
  created_at: Date;
  updated_at: Date;
}

const ROLE_COLUMNS = `id, name, description, builtin, scope, organization_id, project_id, permissions,
  composite_role_ids, incompatible_role_ids, version, created_at, updated_at`;

/**
 * Changes to roles, assignments and groups of one realm take the realm row first, so two of them
 * never check the role graph or group tree against each other's uncommitted state (a cycle made
 * of two concurrent edits). authorizationChanged updates the same row, so nothing new is locked.
 */
export async function lockAuthorization(tx: Tx, realmId: string): Promise<void> {
  await tx.query('select id from realms where id = $1 for update', [realmId]);
}

/** The boundary of a list: realm-wide roles, one organization's or one project's. */
export type RoleBoundary =
  | { kind: 'realm' }
  | { kind: 'organization'; id: string }
  | { kind: 'project'; id: string };

export function listRoles(
  q: Queryable,
  realmId: string,
  boundary: RoleBoundary,
  page: { after: string | null; limit: number },
): Promise<RoleRow[]> {
  // $2 is named in every branch so both drivers can type it.
  const where =
    boundary.kind === 'realm'
      ? 'organization_id is null and project_id is null and $2::text is null'
      : boundary.kind === 'organization'
        ? 'organization_id = $2'
        : 'project_id = $2';
  return many<RoleRow>(
    q,
    `select ${ROLE_COLUMNS} from roles
      where realm_id = $1 and ${where} and ($3::text is null or id > $3)
      order by id limit $4`,
    [realmId, boundary.kind === 'realm' ? null : boundary.id, page.after, page.limit + 1],
  );
}

export const findRole = (q: Queryable, realmId: string, id: string) =>
  maybeOne<RoleRow>(q, `select ${ROLE_COLUMNS} from roles where realm_id = $1 and id = $2`, [realmId, id]);

export const lockRole = (tx: Tx, realmId: string, id: string) =>
  maybeOne<RoleRow>(tx, `select ${ROLE_COLUMNS} from roles where realm_id = $1 and id = $2 for update`, [
    realmId,
    id,
  ]);

export const graphRoleOf = (r: RoleRow): GraphRole => ({
  id: r.id,
  name: r.name,
  builtin: r.builtin,
  scope: r.scope,
  organizationId: r.organization_id,
  projectId: r.project_id,
  permissions: r.permissions,
  composites: r.composite_role_ids,
  incompatible: r.incompatible_role_ids,
});

/** Every role of the realm: composites may cross from one organization's roles to realm-wide ones. */
export async function loadRoleGraph(q: Queryable, realmId: string): Promise<Map<string, GraphRole>> {
  const rows = await many<RoleRow>(q, `select ${ROLE_COLUMNS} from roles where realm_id = $1`, [realmId]);
  return new Map(rows.map((r) => [r.id, graphRoleOf(r)]));
}

export type { RoleGraph };

export interface RoleValues {
  name: string;
  description: string;
  scope: RoleScope;
  organizationId: string | null;
  projectId: string | null;
  permissions: string[];
  compositeRoleIds: string[];
  incompatibleRoleIds: string[];
}

export const newRoleId = (now: Date): string => newId('rol', now.getTime());

export async function insertRole(
  tx: Tx,
  realmId: string,
  id: string,
  v: RoleValues,
  now: Date,
): Promise<RoleRow> {
  const r = await tx.query<RoleRow>(
    `insert into roles (realm_id, id, name, description, builtin, scope, organization_id, project_id, permissions,
       composite_role_ids, incompatible_role_ids, version, created_at, updated_at)
     values ($1, $2, $3, $4, false, $5, $6, $7, $8, $9, $10, 1, $11, $11) returning ${ROLE_COLUMNS}`,
    [
      realmId,
      id,
      v.name,
      v.description,
      v.scope,
      v.organizationId,
      v.projectId,
      v.permissions,
      v.compositeRoleIds,
      v.incompatibleRoleIds,
      now,
    ],
  );
  return r.rows[0] as RoleRow;
}

/** Replaces the changeable members (scope and boundary stay) and bumps the version. */
export async function replaceRole(
  tx: Tx,
  realmId: string,
  id: string,
  v: RoleValues,
  now: Date,
): Promise<RoleRow> {
  const r = await tx.query<RoleRow>(
    `update roles set name = $3, description = $4, permissions = $5, composite_role_ids = $6,
       incompatible_role_ids = $7, version = version + 1, updated_at = $8
     where realm_id = $1 and id = $2 returning ${ROLE_COLUMNS}`,
    [realmId, id, v.name, v.description, v.permissions, v.compositeRoleIds, v.incompatibleRoleIds, now],
  );
  return r.rows[0] as RoleRow;
}

/** Drops a role from the composite and incompatible lists of the others; returns their ids. */
export async function forgetRoleInOthers(tx: Tx, realmId: string, id: string, now: Date): Promise<string[]> {
  const r = await tx.query<{ id: string }>(
    `update roles set composite_role_ids = array_remove(composite_role_ids, $2),
       incompatible_role_ids = array_remove(incompatible_role_ids, $2), version = version + 1, updated_at = $3
     where realm_id = $1 and ($2 = any (composite_role_ids) or $2 = any (incompatible_role_ids)) returning id`,
    [realmId, id, now],
  );
  return r.rows.map((x) => x.id);
}

export async function deleteRole(tx: Tx, realmId: string, id: string): Promise<void> {
  // A pending invitation or join request naming the role would otherwise fail when accepted.
  await tx.query(
    `update membership_requests set role_ids = array_remove(role_ids, $2)
      where realm_id = $1 and state = 'pending' and $2 = any (role_ids)`,
    [realmId, id],
  );
  await tx.query('delete from roles where realm_id = $1 and id = $2', [realmId, id]);
}

// ---- application permissions ------------------------------------------------------------------

export interface PermissionRow {
  name: string;
  description: string | null;
  sensitivity: 'low' | 'normal' | 'high' | 'privileged';
  created_at: Date;
}

export const listPermissions = (
  q: Queryable,
  realmId: string,
  page: { after: string | null; limit: number },
) =>
  many<PermissionRow>(
    q,
    `select name, description, sensitivity, created_at from permissions
      where realm_id = $1 and ($2::text is null or name > $2) order by name limit $3`,
    [realmId, page.after, page.limit + 1],
  );

export const findPermission = (q: Queryable, realmId: string, name: string) =>
  maybeOne<PermissionRow>(
    q,
    `select name, description, sensitivity, created_at from permissions
      where realm_id = $1 and lower(name) = lower($2)`,
    [realmId, name],
  );

/** Registered names by their lower-case form. */
export async function registeredPermissions(q: Queryable, realmId: string, names: readonly string[]) {
  const rows = await many<{ name: string }>(
    q,
    'select name from permissions where realm_id = $1 and lower(name) = any ($2::text[])',
    [realmId, names.map((n) => n.toLowerCase())],
  );
  return new Map(rows.map((r) => [r.name.toLowerCase(), r.name]));
}

export async function insertPermission(
  tx: Tx,
  realmId: string,
  p: { name: string; description: string | null; sensitivity: PermissionRow['sensitivity'] },
  now: Date,
): Promise<PermissionRow | null> {
  const r = await tx.query<PermissionRow>(
    `insert into permissions (realm_id, name, description, sensitivity, created_at) values ($1, $2, $3, $4, $5)
     on conflict do nothing returning name, description, sensitivity, created_at`,
    [realmId, p.name, p.description, p.sensitivity, now],
  );
  return r.rows[0] ?? null;
}

/** Names of roles that hold the permission (any case). */
export const rolesHoldingPermission = (q: Queryable, realmId: string, name: string) =>
  many<{ id: string; name: string }>(
    q,
    `select id, name from roles where realm_id = $1
        and exists (select 1 from unnest(permissions) p where lower(p) = lower($2)) order by id limit 5`,
    [realmId, name],
  );

export async function deletePermission(tx: Tx, realmId: string, name: string): Promise<void> {
  await tx.query('delete from permissions where realm_id = $1 and name = $2', [realmId, name]);
}
