// An organization keeps at least one active owner (docs/architecture.md, knot decisions: the rule
// belongs to roles, because `owner` is a built-in organization role and the rule is about who
// holds it; organizations call it when a membership ends, roles when an assignment is deleted).
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import { liveMembershipSql } from './live-membership.ts';

/** The built-in owner role of the realm. */
export async function ownerRoleId(q: Queryable, realmId: string): Promise<string> {
  const row = await maybeOne<{ id: string }>(
    q,
    `select id from roles where realm_id = $1 and builtin and scope = 'organization'
        and organization_id is null and project_id is null and name = 'owner'`,
    [realmId],
  );
  if (!row) throw new Error(`realm ${realmId} has no built-in owner role`);
  return row.id;
}

/**
 * Users with a live membership (active and not past expires_at) who hold the owner role in the
 * organization, other than the given user.
 */
export async function countOtherActiveOwners(
  q: Queryable,
  realmId: string,
  orgId: string,
  ownerRole: string,
  exceptUserId: string,
  now: Date,
): Promise<number> {
  const r = await q.query<{ n: number }>(
    `select count(*)::int as n from memberships m
      where m.realm_id = $1 and m.organization_id = $2 and ${liveMembershipSql('m', '$5::timestamptz')} and m.user_id <> $4
        and exists (select 1 from role_assignments ra where ra.realm_id = m.realm_id and ra.role_id = $3
                      and ra.subject_type = 'user' and ra.subject_id = m.user_id
                      and ra.scope_type = 'organization' and ra.scope_id = m.organization_id
                      and (ra.expires_at is null or ra.expires_at > $5))`,
    [realmId, orgId, ownerRole, exceptUserId, now],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * Decision (docs/api-organizations.md): an organization keeps at least one active owner, so
 * taking `owner` from the last user who holds it with a live membership is a conflict, whether
 * by suspending or removing the membership or by deleting the assignment.
 */
export async function requireOtherOwner(
  tx: Tx,
  realmId: string,
  orgId: string,
  userId: string,
  now: Date,
): Promise<void> {
  const live = await maybeOne(
    tx,
    `select 1 from memberships m where m.realm_id = $1 and m.organization_id = $2 and m.user_id = $3
        and ${liveMembershipSql('m', '$4::timestamptz')}`,
    [realmId, orgId, userId, now],
  );
  if (!live) return;
  const owner = await ownerRoleId(tx, realmId);
  const holds = await maybeOne(
    tx,
    `select 1 from role_assignments where realm_id = $1 and role_id = $2 and subject_type = 'user'
        and subject_id = $3 and scope_type = 'organization' and scope_id = $4
        and (expires_at is null or expires_at > $5)`,
    [realmId, owner, userId, orgId, now],
  );
  if (!holds) return;
  if ((await countOtherActiveOwners(tx, realmId, orgId, owner, userId, now)) === 0) {
    throw new Problem(409, 'last_owner', 'the organization would have no active owner left');
  }
}
