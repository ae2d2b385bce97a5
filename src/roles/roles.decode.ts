// Strict input of the permissions, roles and role-assignments API (docs/api-roles.md). Shape
// errors answer 400; values that break a rule answer 422.

import {
  array,
  boolean,
  dateTime,
  decodeBody,
  enumOf,
  integer,
  nullable,
  object,
  optional,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { idText, invalid, plainText } from './admin-call.ts';
import { MAX_ROLE_EXPANSION } from './effective-roles.ts';
import { isBuiltinPermissionName } from './permissions.ts';

export const ROLE_SCOPES = ['realm', 'organization', 'project'] as const;
export const SUBJECT_TYPES = ['user', 'service_principal', 'group'] as const;
export const SENSITIVITIES = ['low', 'normal', 'high', 'privileged'] as const;

/** Printable ASCII without spaces, as scope names are. */
const permissionName = idText;

// ---- permissions -------------------------------------------------------------------------------

const permissionShape = object({
  name: permissionName(),
  description: optional(plainText(500)),
  // An empty string means the default, as in the configuration document.
  sensitivity: optional(enumOf(['', ...SENSITIVITIES])),
});

export function decodePermission(body: unknown) {
  const p = decodeBody(permissionShape, body);
  if (isBuiltinPermissionName(p.name)) {
    throw invalid(
      'name',
      'reserved_name',
      'names under realm., org., support. and platform. belong to the service',
    );
  }
  const sensitivity: (typeof SENSITIVITIES)[number] = p.sensitivity ? p.sensitivity : 'normal';
  return { name: p.name, description: p.description ?? null, sensitivity };
}
export type PermissionInput = ReturnType<typeof decodePermission>;

// ---- roles ---------------------------------------------------------------------------------------

const roleShape = object({
  name: plainText(100, 1),
  description: optional(plainText(500)),
  scope: optional(enumOf(ROLE_SCOPES)),
  project_id: optional(idText()),
  permissions: optional(array(permissionName(), { maxItems: 500 }), []),
  composite_role_ids: optional(array(idText(), { maxItems: MAX_ROLE_EXPANSION, unique: true }), []),
  incompatible_role_ids: optional(array(idText(), { maxItems: MAX_ROLE_EXPANSION, unique: true }), []),
});
export type RoleInput = ReturnType<typeof decodeRole>;

export function decodeRole(body: unknown) {
  const r = decodeBody(roleShape, body);
  if (r.name.trim() !== r.name) throw invalid('name', 'pattern', 'no leading or trailing spaces');
  return r;
}

// ---- role assignments ----------------------------------------------------------------------------

const conditionsShape = object({
  require_mfa: optional(boolean()),
  max_auth_age_seconds: optional(integer({ min: 1, max: 86400 })),
});

const assignmentFields = {
  role_id: idText(),
  subject_type: enumOf(SUBJECT_TYPES),
  subject_id: idText(),
  conditions: optional(nullable(conditionsShape)),
  valid_from: optional(dateTime()),
  expires_at: optional(dateTime()),
  reason: optional(plainText(500, 1)),
};
const assignmentShape = object({
  ...assignmentFields,
  scope_type: enumOf(ROLE_SCOPES),
  scope_id: optional(idText()),
});
// Inside /organizations/{org}/role-assignments the scope is the path's organization.
const orgAssignmentShape = object(assignmentFields);

export interface AssignmentInput {
  roleId: string;
  subjectType: (typeof SUBJECT_TYPES)[number];
  subjectId: string;
  scopeType: (typeof ROLE_SCOPES)[number];
  /** '' at realm scope, as stored. */
  scopeId: string;
  conditions: { require_mfa?: boolean; max_auth_age_seconds?: number } | null;
  validFrom: Date | null;
  expiresAt: Date | null;
  reason: string | null;
}

function windowChecked(a: AssignmentInput, now: Date): AssignmentInput {
  if (a.expiresAt !== null && a.expiresAt.getTime() <= now.getTime())
    throw invalid('expires_at', 'in_past', 'expires_at must be in the future');
  if (a.expiresAt !== null && a.validFrom !== null && a.expiresAt.getTime() <= a.validFrom.getTime())
    throw invalid('expires_at', 'before_valid_from', 'expires_at must be after valid_from');
  return a;
}

function commonOf(r: {
  roleId: string;
  subjectType: AssignmentInput['subjectType'];
  subjectId: string;
  conditions?: { requireMfa?: boolean; maxAuthAgeSeconds?: number } | null;
  validFrom?: Date;
  expiresAt?: Date;
  reason?: string;
}) {
  const c = r.conditions;
  const conditions =
    c && (c.requireMfa !== undefined || c.maxAuthAgeSeconds !== undefined)
      ? {
          ...(c.requireMfa !== undefined ? { require_mfa: c.requireMfa } : {}),
          ...(c.maxAuthAgeSeconds !== undefined ? { max_auth_age_seconds: c.maxAuthAgeSeconds } : {}),
        }
      : null;
  return {
    roleId: r.roleId,
    subjectType: r.subjectType,
    subjectId: r.subjectId,
    conditions,
    validFrom: r.validFrom ?? null,
    expiresAt: r.expiresAt ?? null,
    reason: r.reason ?? null,
  };
}

export function decodeAssignment(body: unknown, now: Date): AssignmentInput {
  const r = decodeBody(assignmentShape, body);
  if (r.scopeType === 'realm' && r.scopeId !== undefined)
    throw invalid('scope_id', 'not_allowed', 'a realm-scope assignment has no scope_id');
  if (r.scopeType !== 'realm' && r.scopeId === undefined)
    throw problem.validation(
      [{ field: 'scope_id', code: 'required' }],
      `scope_id is required at ${r.scopeType} scope`,
    );
  return windowChecked({ ...commonOf(r), scopeType: r.scopeType, scopeId: r.scopeId ?? '' }, now);
}

export function decodeOrgAssignment(body: unknown, orgId: string, now: Date): AssignmentInput {
  const r = decodeBody(orgAssignmentShape, body);
  return windowChecked({ ...commonOf(r), scopeType: 'organization', scopeId: orgId }, now);
}

// ---- path parameters -------------------------------------------------------------------------------

/** Ids that cannot exist are simply not found; they never reach SQL. */
export function idParam(prefix: string, raw: string, what: string): string {
  if (!new RegExp(`^${prefix}_[0-9A-Za-z_-]{1,64}$`).test(raw)) throw problem.notFound(`no such ${what}`);
  return raw;
}
