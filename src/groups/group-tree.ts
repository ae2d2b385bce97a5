// Where a group may sit in its tree (doc 2, Limits: group depth 8; a top-level group has depth 1).
// Pure rules; groups.service.ts supplies the rows.

import type { FieldError } from '../platform/http/problem.ts';
import { MAX_GROUP_DEPTH } from '../roles/effective-roles.ts';

export interface TreeNode {
  id: string;
  organizationId: string | null;
  depth: number;
}

/** A parent must be in the same organization, or both realm-wide. */
export function parentProblem(
  child: { organizationId: string | null },
  parent: TreeNode | null,
): FieldError | null {
  if (parent === null) return { field: 'parent_id', code: 'unknown_group', detail: 'no such group' };
  if (parent.organizationId !== child.organizationId)
    return {
      field: 'parent_id',
      code: 'organization_mismatch',
      detail: 'the parent must be in the same organization',
    };
  if (parent.depth + 1 > MAX_GROUP_DEPTH)
    return {
      field: 'parent_id',
      code: 'group_depth_limit',
      detail: `groups nest at most ${MAX_GROUP_DEPTH} levels deep`,
    };
  return null;
}

/**
 * Moving a subtree: the new parent may not be the group or one of its descendants, and the
 * deepest descendant must stay within the depth limit. `height` is how many levels lie below the
 * group (0 for a leaf).
 */
export function moveProblem(
  group: TreeNode,
  newParent: TreeNode | null,
  descendants: ReadonlySet<string>,
  height: number,
): FieldError | null {
  if (newParent === null) return height + 1 > MAX_GROUP_DEPTH ? depthExceeded() : null;
  if (newParent.id === group.id || descendants.has(newParent.id))
    return {
      field: 'parent_id',
      code: 'group_cycle',
      detail: 'a group cannot move under itself or its descendants',
    };
  const base = parentProblem(group, newParent);
  if (base) return base;
  return newParent.depth + 1 + height > MAX_GROUP_DEPTH ? depthExceeded() : null;
}

const depthExceeded = (): FieldError => ({
  field: 'parent_id',
  code: 'group_depth_limit',
  detail: `the move would nest groups more than ${MAX_GROUP_DEPTH} levels deep`,
});
