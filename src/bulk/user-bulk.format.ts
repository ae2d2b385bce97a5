// A bulk action on many accounts (docs/user-bulk.md): the request body of POST /user-bulk-actions
// and the permission each action needs. Document 2 names the job type `user.bulk` and that the
// worker re-checks the permission of the action (Jobs and exports, the re-check table); the
// actions, their members and the upper bound of 1,000 accounts (the user-import bound) are ours
// (docs/decisions.md).
import { array, type Decoded, enumOf, object, optional, string } from '../platform/http/decode.ts';
import type { FieldError } from '../platform/http/problem.ts';
import { plainText } from '../roles/admin-call.ts';
import { ADMIN_REQUIRED_ACTIONS, type AdminRequiredAction } from '../users/index.ts';

export const BULK_ACTIONS = [
  'suspend',
  'reactivate',
  'revoke_sessions',
  'set_required_action',
  'add_to_group',
  'add_to_organization',
  'delete',
] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

export const MAX_BULK_USERS = 1000;

const userId = string({ pattern: /usr_[0-9a-z]{26}/ });

export const decodeBulkRequest = object({
  action: enumOf(BULK_ACTIONS),
  user_ids: array(userId, { minItems: 1, maxItems: MAX_BULK_USERS, unique: true }),
  reason: optional(plainText(500, 1)),
  required_action: optional(enumOf(ADMIN_REQUIRED_ACTIONS)),
  group_id: optional(string({ pattern: /grp_[0-9a-z]{26}/ })),
  organization_id: optional(string({ pattern: /org_[0-9a-z]{26}/ })),
});
export type BulkRequest = Decoded<typeof decodeBulkRequest>;

/** The members an action needs and the ones it must not have (422 for either). */
const NEEDS: Record<BulkAction, readonly ('reason' | 'requiredAction' | 'groupId' | 'organizationId')[]> = {
  suspend: ['reason'],
  reactivate: ['reason'],
  revoke_sessions: [],
  set_required_action: ['requiredAction'],
  add_to_group: ['groupId'],
  add_to_organization: ['organizationId'],
  delete: [],
};
const WIRE = {
  reason: 'reason',
  requiredAction: 'required_action',
  groupId: 'group_id',
  organizationId: 'organization_id',
} as const;

export function bulkRequestProblems(r: BulkRequest): FieldError[] {
  const errors: FieldError[] = [];
  const needs = NEEDS[r.action];
  for (const member of ['reason', 'requiredAction', 'groupId', 'organizationId'] as const) {
    const given = r[member] !== undefined;
    // A reason may accompany any action; the others belong to theirs only.
    if (needs.includes(member) && !given)
      errors.push({ field: WIRE[member], code: 'required', detail: `${r.action} needs it` });
    else if (!needs.includes(member) && given && member !== 'reason')
      errors.push({ field: WIRE[member], code: 'not_allowed', detail: `not a member of ${r.action}` });
  }
  return errors;
}

// The permission of each required action, as for a user import (imports/user-import.authority.ts).
const REQUIRED_ACTION_PERMISSION: Record<AdminRequiredAction, string> = {
  update_password: 'realm.users.credentials.manage',
  configure_totp: 'realm.users.credentials.manage',
  verify_email: 'realm.users.write',
  verify_contact: 'realm.users.write',
};

/**
 * The permission an action needs and where: the same as the single-account route that does it
 * (suspend, reactivate and ending sessions: realm.users.suspend; deletion: realm.users.write; a
 * realm group: realm.groups.write; an organization: org.members.write inside it).
 */
export function bulkPermission(r: Pick<BulkRequest, 'action' | 'requiredAction' | 'organizationId'>): {
  permission: string;
  organizationId: string | null;
} {
  switch (r.action) {
    case 'suspend':
    case 'reactivate':
    case 'revoke_sessions':
      return { permission: 'realm.users.suspend', organizationId: null };
    case 'delete':
      return { permission: 'realm.users.write', organizationId: null };
    case 'set_required_action':
      return {
        permission: REQUIRED_ACTION_PERMISSION[r.requiredAction as AdminRequiredAction],
        organizationId: null,
      };
    case 'add_to_group':
      return { permission: 'realm.groups.write', organizationId: null };
    case 'add_to_organization':
      return { permission: 'org.members.write', organizationId: r.organizationId ?? null };
  }
}
