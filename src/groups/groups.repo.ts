// SQL for groups and group members (migration 0007).

import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { AffectedSubject } from '../roles/authz-revision.ts';

export interface GroupRow {
  id: string;
  organization_id: string | null;
  parent_id: string | null;
  depth: number;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  external_id: string | null;
  source: string;
  dynamic_rule: unknown;
  member_count: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `g.id, g.organization_id, g.parent_id, g.depth, g.name, g.description, g.metadata, g.external_id,
  g.source, g.dynamic_rule, g.created_at, g.updated_at,
  (select count(*)::int from group_members m where m.realm_id = g.realm_id and m.group_id = g.id) as member_count`;

export const findGroup = (q: Queryable, realmId: string, id: string) =>
  maybeOne<GroupRow>(q, `select ${COLUMNS} from groups g where g.realm_id = $1 and g.id = $2`, [realmId, id]);

export const lockGroup = (tx: Tx, realmId: string, id: string) =>
  maybeOne<GroupRow>(tx, `select ${COLUMNS} from groups g where g.realm_id = $1 and g.id = $2 for update`, [
    realmId,
    id,
  ]);

/** Groups of one organization, or realm-wide ones (orgId null). */
export const listGroups = (
  q: Queryable,
  realmId: string,
  orgId: string | null,
  f: { parentId?: string },
  page: { after: string | null; limit: number },
) =>
  many<GroupRow>(
    q,
    `select ${COLUMNS} from groups g
      where g.realm_id = $1 and g.organization_id is not distinct from $2
        and ($3::text is null or g.parent_id = $3) and ($4::text is null or g.id > $4)
      order by g.id limit $5`,
    [realmId, orgId, f.parentId ?? null, page.after, page.limit + 1],
  );

export interface GroupValues {
  organizationId: string | null;
  parentId: string | null;
  depth: number;
  name: string;
  description: string | null;
  metadata: Record<string, unknown>;
  externalId: string | null;
}

export async function insertGroup(tx: Tx, realmId: string, v: GroupValues, now: Date): Promise<string> {
  const id = newId('grp', now.getTime());
  await tx.query(
    `insert into groups (realm_id, id, organization_id, parent_id, depth, name, description, metadata, external_id,
       source, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'admin', $10, $10)`,
    [
      realmId,
      id,
      v.organizationId,
      v.parentId,
      v.depth,
      v.name,
      v.description,
      JSON.stringify(v.metadata),
      v.externalId,
      now,
    ],
  );
  return id;
}

export async function updateGroup(
  tx: Tx,
  realmId: string,
  id: string,
  v: Omit<GroupValues, 'organizationId' | 'depth'>,
  now: Date,
): Promise<void> {
  await tx.query(
    `update groups set parent_id = $3, name = $4, description = $5, metadata = $6, external_id = $7, updated_at = $8
      where realm_id = $1 and id = $2`,
    [realmId, id, v.parentId, v.name, v.description, JSON.stringify(v.metadata), v.externalId, now],
  );
}

/** The group's descendants (not itself) with their depths. */
export const descendantsOf = (q: Queryable, realmId: string, id: string) =>
  many<{ id: string; depth: number }>(
    q,
    `with recursive d(id, depth) as (
       select id, depth from groups where realm_id = $1 and parent_id = $2
       union
       select g.id, g.depth from groups g join d on g.realm_id = $1 and g.parent_id = d.id
     ) select id, depth from d`,
    [realmId, id],
  );

/**
 * Roles assigned to the group or one of its ancestors (and to `alsoGroup` itself), with where
 * they apply. Expired assignments do not count; ones not yet valid do, as they will.
 */
export const rolesOfGroupChain = (
  q: Queryable,
  realmId: string,
  groupId: string,
  now: Date,
  alsoGroup: string | null = null,
) =>
  many<{ role_id: string; scope_type: string; scope_id: string }>(
    q,
    `with recursive chain(id, depth) as (
       select id, 1 from groups where realm_id = $1 and id = $2
       union
       select g.parent_id, chain.depth + 1 from chain join groups g on g.realm_id = $1 and g.id = chain.id
        where g.parent_id is not null and chain.depth < 16
     )
     select distinct ra.role_id, ra.scope_type, ra.scope_id from role_assignments ra
      where ra.realm_id = $1 and ra.subject_type = 'group'
        and (ra.subject_id in (select id from chain) or ra.subject_id = $4::text)
        and (ra.expires_at is null or ra.expires_at > $3)`,
    [realmId, groupId, now, alsoGroup],
  );

/** Shifts the depth of the listed groups by delta. */
export async function shiftDepth(
  tx: Tx,
  realmId: string,
  ids: readonly string[],
  delta: number,
): Promise<void> {
  if (delta === 0 || ids.length === 0) return;
  await tx.query('update groups set depth = depth + $3 where realm_id = $1 and id = any ($2::text[])', [
    realmId,
    ids,
    delta,
  ]);
}

export const hasChildren = async (q: Queryable, realmId: string, id: string): Promise<boolean> =>
  (await q.query('select 1 from groups where realm_id = $1 and parent_id = $2 limit 1', [realmId, id])).rows
    .length > 0;

export async function deleteGroupRow(tx: Tx, realmId: string, id: string): Promise<void> {
  await tx.query('delete from groups where realm_id = $1 and id = $2', [realmId, id]);
}

// ---- members ----------------------------------------------------------------------------------

export interface MemberRow {
  subject_type: 'user' | 'service_principal';
  subject_id: string;
  created_at: Date;
}

export const listMembers = (
  q: Queryable,
  realmId: string,
  groupId: string,
  page: { after: string | null; limit: number },
) =>
  many<MemberRow & { id: string }>(
    q,
    `select subject_type, subject_id, created_at, subject_id as id from group_members
      where realm_id = $1 and group_id = $2 and ($3::text is null or subject_id > $3)
      order by subject_id limit $4`,
    [realmId, groupId, page.after, page.limit + 1],
  );

/** Members of the groups (users and principals); their inherited roles change with the groups. */
export const membersOf = (q: Queryable, realmId: string, groupIds: readonly string[]) =>
  many<AffectedSubject>(
    q,
    `select distinct subject_type as type, subject_id as id from group_members
      where realm_id = $1 and group_id = any ($2::text[])`,
    [realmId, groupIds],
  );

export async function insertMember(
  tx: Tx,
  realmId: string,
  groupId: string,
  subject: { type: string; id: string },
  now: Date,
): Promise<boolean> {
  const r = await tx.query(
    `insert into group_members (realm_id, group_id, subject_type, subject_id, created_at) values ($1, $2, $3, $4, $5)
     on conflict do nothing`,
    [realmId, groupId, subject.type, subject.id, now],
  );
  return r.rowCount > 0;
}

export async function deleteMember(
  tx: Tx,
  realmId: string,
  groupId: string,
  subject: { type: string; id: string },
): Promise<boolean> {
  const r = await tx.query(
    'delete from group_members where realm_id = $1 and group_id = $2 and subject_type = $3 and subject_id = $4',
    [realmId, groupId, subject.type, subject.id],
  );
  return r.rowCount > 0;
}

export const deleteAllMembers = (tx: Tx, realmId: string, groupId: string) =>
  many<AffectedSubject>(
    tx,
    'delete from group_members where realm_id = $1 and group_id = $2 returning subject_type as type, subject_id as id',
    [realmId, groupId],
  );
