// SQL for role assignments (migrations 0001 and 0007). scope_id is '' at realm scope.

import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { AffectedSubject } from './authz-revision.ts';

export interface AssignmentRow {
  id: string;
  role_id: string;
  role_name: string;
  subject_type: 'user' | 'service_principal' | 'group';
  subject_id: string;
  scope_type: 'realm' | 'organization' | 'project';
  scope_id: string;
  conditions: { require_mfa?: boolean; max_auth_age_seconds?: number } | null;
  valid_from: Date | null;
  expires_at: Date | null;
  source: string;
  reason: string | null;
  membership_id: string | null;
  created_at: Date;
}

const COLUMNS = `ra.id, ra.role_id, r.name as role_name, ra.subject_type, ra.subject_id, ra.scope_type, ra.scope_id,
  ra.conditions, ra.valid_from, ra.expires_at, ra.source, ra.reason, ra.membership_id, ra.created_at`;

export interface AssignmentFilters {
  subjectType?: string;
  subjectId?: string;
  roleId?: string;
  scopeType?: string;
  scopeId?: string;
}

export const listAssignments = (
  q: Queryable,
  realmId: string,
  f: AssignmentFilters,
  page: { after: string | null; limit: number },
) =>
  many<AssignmentRow>(
    q,
    `select ${COLUMNS} from role_assignments ra join roles r on r.realm_id = ra.realm_id and r.id = ra.role_id
      where ra.realm_id = $1 and ($2::text is null or ra.subject_type = $2) and ($3::text is null or ra.subject_id = $3)
        and ($4::text is null or ra.role_id = $4) and ($5::text is null or ra.scope_type = $5)
        and ($6::text is null or ra.scope_id = $6) and ($7::text is null or ra.id > $7)
      order by ra.id limit $8`,
    [
      realmId,
      f.subjectType ?? null,
      f.subjectId ?? null,
      f.roleId ?? null,
      f.scopeType ?? null,
      f.scopeId ?? null,
      page.after,
      page.limit + 1,
    ],
  );

export const findAssignment = (q: Queryable, realmId: string, id: string) =>
  maybeOne<AssignmentRow>(
    q,
    `select ${COLUMNS} from role_assignments ra join roles r on r.realm_id = ra.realm_id and r.id = ra.role_id
      where ra.realm_id = $1 and ra.id = $2`,
    [realmId, id],
  );

export interface NewAssignment {
  roleId: string;
  subjectType: AssignmentRow['subject_type'];
  subjectId: string;
  scopeType: AssignmentRow['scope_type'];
  scopeId: string;
  conditions: AssignmentRow['conditions'];
  validFrom: Date | null;
  expiresAt: Date | null;
  reason: string | null;
}

/** null when the same role is already assigned to the subject in the same scope. */
export async function insertAssignment(
  tx: Tx,
  realmId: string,
  a: NewAssignment,
  now: Date,
): Promise<string | null> {
  const id = newId('ras', now.getTime());
  const r = await tx.query<{ id: string }>(
    `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, conditions,
       valid_from, expires_at, source, reason, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'admin', $11, $12) on conflict do nothing returning id`,
    [
      realmId,
      id,
      a.roleId,
      a.subjectType,
      a.subjectId,
      a.scopeType,
      a.scopeId,
      a.conditions === null ? null : JSON.stringify(a.conditions),
      a.validFrom,
      a.expiresAt,
      a.reason,
      now,
    ],
  );
  return r.rows[0]?.id ?? null;
}

export type RemovedAssignment = Pick<
  AssignmentRow,
  'id' | 'role_id' | 'subject_type' | 'subject_id' | 'scope_type' | 'scope_id'
>;

const REMOVED = 'id, role_id, subject_type, subject_id, scope_type, scope_id';

export const deleteAssignment = (tx: Tx, realmId: string, id: string) =>
  many<RemovedAssignment>(
    tx,
    `delete from role_assignments where realm_id = $1 and id = $2 returning ${REMOVED}`,
    [realmId, id],
  );

export const deleteAssignmentsOfRole = (tx: Tx, realmId: string, roleId: string) =>
  many<RemovedAssignment>(
    tx,
    `delete from role_assignments where realm_id = $1 and role_id = $2 returning ${REMOVED}`,
    [realmId, roleId],
  );

export const deleteAssignmentsOfSubject = (tx: Tx, realmId: string, subjectType: string, subjectId: string) =>
  many<RemovedAssignment>(
    tx,
    `delete from role_assignments where realm_id = $1 and subject_type = $2 and subject_id = $3 returning ${REMOVED}`,
    [realmId, subjectType, subjectId],
  );

/**
 * Roles the subject holds or will hold in exactly this scope: its own assignments and, for a user
 * or principal, those of its groups and their ancestors; for a group, those of its ancestors.
 * Expired assignments do not count; ones not yet valid do.
 */
export async function heldRoleIds(
  q: Queryable,
  realmId: string,
  subject: { type: string; id: string },
  scope: { type: string; id: string },
  now: Date,
): Promise<string[]> {
  const rows = await many<{ role_id: string }>(
    q,
    `with recursive sg(group_id, depth) as (
       select gm.group_id, 1 from group_members gm
        where gm.realm_id = $1 and gm.subject_type = $2 and gm.subject_id = $3
       union all
       select g.id, 1 from groups g where g.realm_id = $1 and $2 = 'group' and g.id = $3
       union
       select g.parent_id, sg.depth + 1 from sg join groups g on g.realm_id = $1 and g.id = sg.group_id
        where g.parent_id is not null and sg.depth < 8
     )
     select distinct ra.role_id from role_assignments ra
      where ra.realm_id = $1 and ra.scope_type = $4 and ra.scope_id = $5
        and (ra.expires_at is null or ra.expires_at > $6)
        and ((ra.subject_type = $2 and ra.subject_id = $3)
          or (ra.subject_type = 'group' and ra.subject_id in (select group_id from sg)))`,
    [realmId, subject.type, subject.id, scope.type, scope.id, now],
  );
  return rows.map((r) => r.role_id);
}

/** Users and principals assigned one of the roles directly (their authz_version moves). */
export async function directHolders(
  q: Queryable,
  realmId: string,
  roleIds: readonly string[],
): Promise<AffectedSubject[]> {
  if (roleIds.length === 0) return [];
  return many<AffectedSubject>(
    q,
    `select distinct subject_type as type, subject_id as id from role_assignments
      where realm_id = $1 and role_id = any ($2::text[]) and subject_type in ('user', 'service_principal')`,
    [realmId, roleIds],
  );
}
