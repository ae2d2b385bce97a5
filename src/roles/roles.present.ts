// Wire forms of permissions, roles and role assignments (docs/api-roles.md).

import { iso } from './admin-call.ts';
import type { AssignmentRow } from './assignments.repo.ts';
import { permissionsOfRole } from './effective-roles.ts';
import type { PermissionRow, RoleRow } from './roles.repo.ts';

export const presentPermission = (p: PermissionRow) => ({
  name: p.name,
  description: p.description,
  sensitivity: p.sensitivity,
  builtin: false,
  created_at: iso(p.created_at),
});

export const presentBuiltinPermission = (name: string) => ({
  name,
  description: null,
  sensitivity: 'normal',
  builtin: true,
  created_at: null,
});

export const presentRole = (r: RoleRow) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  builtin: r.builtin,
  scope: r.scope,
  organization_id: r.organization_id,
  project_id: r.project_id,
  // Built-in roles take theirs from code, so a release reaches realms created before it.
  permissions: [...permissionsOfRole({ name: r.name, builtin: r.builtin, permissions: r.permissions })],
  composite_role_ids: r.composite_role_ids,
  incompatible_role_ids: r.incompatible_role_ids,
  version: r.version,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export const presentAssignment = (a: AssignmentRow) => ({
  id: a.id,
  role_id: a.role_id,
  role: a.role_name,
  subject_type: a.subject_type,
  subject_id: a.subject_id,
  scope_type: a.scope_type,
  scope_id: a.scope_type === 'realm' ? null : a.scope_id,
  conditions: a.conditions,
  valid_from: iso(a.valid_from),
  expires_at: iso(a.expires_at),
  source: a.source,
  reason: a.reason,
  membership_id: a.membership_id,
  created_at: iso(a.created_at),
});
