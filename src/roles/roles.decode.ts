// Strict input of the permissions, roles and role-assignments API (docs/api-roles.md). Shape
// errors answer 400; values that break a rule answer 422.

import type { Static } from 'typebox';
import {
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
import { type CamelKeys, schemaDecoder } from '../platform/http/route-schema.ts';
import { idText, invalid, plainText } from './admin-call.ts';
import { isBuiltinPermissionName } from './permissions.ts';
import { PermissionBody, ROLE_SCOPES, RoleBody, type SENSITIVITIES } from './roles.schema.ts';

export { ROLE_SCOPES, SENSITIVITIES } from './roles.schema.ts';
export const SUBJECT_TYPES = ['user', 'service_principal', 'group'] as const;

// ---- permissions and roles (bodies declared in roles.schema.ts) --------------------------------

const permissionShape = schemaDecoder(PermissionBody);
const roleShape = schemaDecoder(RoleBody);

/** A permission body after its schema: reserved names refused, the default sensitivity filled in. */
export function permissionInput(p: CamelKeys<Static<typeof PermissionBody>>) {
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
export const decodePermission = (body: unknown) => permissionInput(decodeBody(permissionShape, body));
export type PermissionInput = ReturnType<typeof permissionInput>;

/** A role body after its schema: no spaces around the name; the lists default to empty. */
export function roleInput(r: CamelKeys<Static<typeof RoleBody>>) {
  if (r.name.trim() !== r.name) throw invalid('name', 'pattern', 'no leading or trailing spaces');
  return {
    ...r,
    permissions: r.permissions ?? [],
    compositeRoleIds: r.compositeRoleIds ?? [],
    incompatibleRoleIds: r.incompatibleRoleIds ?? [],
  };
}
export const decodeRole = (body: unknown) => roleInput(decodeBody(roleShape, body));
export type RoleInput = ReturnType<typeof roleInput>;

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
