// Groups (docs/api-roles.md, Groups): realm-wide groups and groups of one organization, nested
// up to 8 levels. Each change keeps the tree within what effective-roles.ts walks, and writes the
// row, audit record and authorization revision in one transaction.
import type { AuditType } from '../audit/audit.types.ts';
import { inChange, type Recorder } from '../audit/index.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { type AdminChange, invalid, invalidAll } from '../roles/admin-call.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { deleteAssignmentsOfSubject, lockAuthorization } from '../roles/index.ts';
import { announceRemoved } from '../roles/roles.service.ts';
import { ensureGroupWithinCeiling } from './group-ceiling.ts';
import { moveProblem, parentProblem, type TreeNode } from './group-tree.ts';
import type { CreateGroupInput, UpdateGroupInput } from './groups.decode.ts';
import {
  deleteAllMembers,
  deleteGroupRow,
  descendantsOf,
  findGroup,
  type GroupRow,
  hasChildren,
  insertGroup,
  lockGroup,
  membersOf,
  shiftDepth,
  updateGroup,
} from './groups.repo.ts';

/** Realm routes see every group of the realm; an organization's routes only its own groups. */
export type GroupRoute = { kind: 'realm' } | { kind: 'organization'; orgId: string };

const visible = (route: GroupRoute, g: Pick<GroupRow, 'organization_id'>): boolean =>
  route.kind === 'realm' || g.organization_id === route.orgId;

export async function getGroup(
  q: Queryable,
  realmId: string,
  route: GroupRoute,
  id: string,
): Promise<GroupRow> {
  const g = await findGroup(q, realmId, id);
  if (!g || !visible(route, g)) throw problem.notFound('no such group');
  return g;
}

const nodeOf = (g: GroupRow | null): TreeNode | null =>
  g && { id: g.id, organizationId: g.organization_id, depth: g.depth };

/** Another organization's group is not found on an organization's routes (not 422: it would leak). */
function hideForeign(route: GroupRoute, parent: TreeNode | null): void {
  if (
    route.kind === 'organization' &&
    parent?.organizationId != null &&
    parent.organizationId !== route.orgId
  )
    throw problem.notFound('no such group');
}

const nameTaken = () => problem.conflict('a group with this name exists under the same parent');

const auditGroup = (
  record: Recorder,
  type: AuditType,
  g: Pick<GroupRow, 'id' | 'organization_id'>,
  data: Record<string, unknown>,
) =>
  record.audit(type, {
    category: 'configuration',
    target: { type: 'group', id: g.id },
    orgId: g.organization_id,
    data,
  });

export async function createGroup(
  db: Db,
  c: AdminChange,
  route: GroupRoute,
  input: CreateGroupInput,
): Promise<GroupRow> {
  return inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    const organizationId = route.kind === 'organization' ? route.orgId : null;
    let depth = 1;
    if (input.parentId !== undefined) {
      const parent = nodeOf(await findGroup(tx, c.realmId, input.parentId));
      hideForeign(route, parent);
      const wrong = parentProblem({ organizationId }, parent);
      if (wrong) throw invalidAll([wrong]);
      depth = (parent as TreeNode).depth + 1;
      // The new group's members will hold what the parent and its ancestors hold.
      await ensureGroupWithinCeiling(tx, c, input.parentId);
    }
    let id: string;
    try {
      id = await insertGroup(
        tx,
        c.realmId,
        {
          organizationId,
          parentId: input.parentId ?? null,
          depth,
          name: input.name,
          description: input.description ?? null,
          metadata: input.metadata ?? {},
          externalId: input.externalId ?? null,
        },
        c.now,
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken();
      throw e;
    }
    await auditGroup(
      record,
      'group.created',
      { id, organization_id: organizationId },
      { parent_id: input.parentId ?? null, depth },
    );
    await authorizationChanged(tx, c.realmId);
    return (await findGroup(tx, c.realmId, id)) as GroupRow;
  });
}

export async function changeGroup(
  db: Db,
  c: AdminChange,
  route: GroupRoute,
  id: string,
  input: UpdateGroupInput,
): Promise<GroupRow> {
  return inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    const g = await lockGroup(tx, c.realmId, id);
    if (!g || !visible(route, g)) throw problem.notFound('no such group');
    const parentId = input.parentId === undefined ? g.parent_id : input.parentId;
    const moved = parentId !== g.parent_id;
    let subtree: string[] = [];
    if (moved) {
      const below = await descendantsOf(tx, c.realmId, g.id);
      const height = below.reduce((h, d) => Math.max(h, d.depth - g.depth), 0);
      const parent = parentId === null ? null : nodeOf(await findGroup(tx, c.realmId, parentId));
      if (parentId !== null && parent === null) throw invalid('parent_id', 'unknown_group', 'no such group');
      hideForeign(route, parent);
      const wrong = moveProblem(nodeOf(g) as TreeNode, parent, new Set(below.map((d) => d.id)), height);
      if (wrong) throw invalidAll([wrong]);
      // Under its new parent the group's members hold what the group and its new ancestors hold.
      if (parentId !== null) await ensureGroupWithinCeiling(tx, c, parentId, g.id);
      subtree = [g.id, ...below.map((d) => d.id)];
      await shiftDepth(tx, c.realmId, subtree, (parent ? parent.depth + 1 : 1) - g.depth);
    }
    try {
      await updateGroup(
        tx,
        c.realmId,
        id,
        {
          parentId,
          name: input.name ?? g.name,
          description: input.description === undefined ? g.description : input.description,
          metadata: input.metadata === undefined ? g.metadata : (input.metadata ?? {}),
          externalId: input.externalId === undefined ? g.external_id : input.externalId,
        },
        c.now,
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken();
      throw e;
    }
    await auditGroup(record, 'group.updated', g, {
      changed: Object.keys(input),
      ...(moved ? { from_parent_id: g.parent_id, parent_id: parentId } : {}),
    });
    // Members of a moved subtree inherit from other ancestors now.
    await authorizationChanged(tx, c.realmId, moved ? await membersOf(tx, c.realmId, subtree) : []);
    return (await findGroup(tx, c.realmId, id)) as GroupRow;
  });
}

/** Deletes a group without children, with its members and its role assignments. */
export async function deleteGroup(db: Db, c: AdminChange, route: GroupRoute, id: string): Promise<void> {
  await inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    const g = await lockGroup(tx, c.realmId, id);
    if (!g || !visible(route, g)) throw problem.notFound('no such group');
    if (await hasChildren(tx, c.realmId, id))
      throw problem.conflict('the group has child groups; delete or move them first');
    const members = await deleteAllMembers(tx, c.realmId, id);
    const removed = await deleteAssignmentsOfSubject(tx, c.realmId, 'group', id);
    await announceRemoved(record, removed);
    await deleteGroupRow(tx, c.realmId, id);
    await auditGroup(record, 'group.deleted', g, {
      name: g.name,
      members_removed: members.length,
      assignments_removed: removed.length,
    });
    await authorizationChanged(tx, c.realmId, members);
  });
}
