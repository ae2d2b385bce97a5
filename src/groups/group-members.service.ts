// Group members (docs/api-roles.md, Groups): users and service principals. Members of an
// organization's group must belong to that organization. Adding and removing are idempotent.
import type { AuditType } from '../audit/audit.types.ts';
import { inChange } from '../audit/index.ts';
import { isLiveMembership } from '../organizations/membership-rules.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import type { AdminChange } from '../roles/admin-call.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import {
  findCurrentMembership,
  findLivePrincipal,
  findLiveUser,
  lockAuthorization,
  principalAllowedIn,
} from '../roles/index.ts';
import { ensureGroupWithinCeiling } from './group-ceiling.ts';
import { deleteMember, type GroupRow, insertMember } from './groups.repo.ts';
import { type GroupRoute, getGroup } from './groups.service.ts';

export interface MemberRef {
  type: 'user' | 'service_principal';
  id: string;
}

async function ensureMayJoin(
  tx: Tx,
  realmId: string,
  route: GroupRoute,
  g: GroupRow,
  m: MemberRef,
  now: Date,
): Promise<void> {
  // On an organization's routes, who is not in the organization is not found there: a 409 would
  // tell its administrators which ids exist elsewhere in the realm.
  const hidden = route.kind === 'organization';
  if (m.type === 'user') {
    if (!(await findLiveUser(tx, realmId, m.id))) throw problem.notFound('no such user');
    if (g.organization_id === null) return;
    const membership = await findCurrentMembership(tx, realmId, g.organization_id, m.id);
    if (!membership && hidden) throw problem.notFound('no such user');
    if (!membership || !isLiveMembership(membership, now))
      throw problem.conflict('only active members of the organization can join its groups');
    return;
  }
  const p = await findLivePrincipal(tx, realmId, m.id);
  if (!p) throw problem.notFound('no such service principal');
  if (g.organization_id !== null && !principalAllowedIn(p, g.organization_id)) {
    if (hidden) throw problem.notFound('no such service principal');
    throw problem.conflict('the service principal may not act in the organization');
  }
}

/**
 * One idempotent member change under the authorization lock: when `apply` reports that nothing
 * changed, nothing is audited and no revision is taken.
 */
async function changeMembers(
  db: Db,
  c: AdminChange,
  route: GroupRoute,
  groupId: string,
  m: MemberRef,
  type: AuditType,
  apply: (tx: Tx, g: GroupRow) => Promise<boolean>,
): Promise<void> {
  await inChange(db, c, async (tx, record) => {
    await lockAuthorization(tx, c.realmId);
    const g = await getGroup(tx, c.realmId, route, groupId);
    if (!(await apply(tx, g))) return;
    await record.audit(type, {
      category: 'security',
      subject: { type: m.type, id: m.id },
      target: { type: 'group', id: g.id },
      orgId: g.organization_id,
      data: { group_id: g.id },
    });
    await authorizationChanged(tx, c.realmId, [m]);
  });
}

export const addMember = (db: Db, c: AdminChange, route: GroupRoute, groupId: string, m: MemberRef) =>
  changeMembers(db, c, route, groupId, m, 'group.member.added', async (tx, g) => {
    await ensureMayJoin(tx, c.realmId, route, g, m, c.now);
    await ensureGroupWithinCeiling(tx, c, g.id);
    return insertMember(tx, c.realmId, g.id, m, c.now);
  });

export const removeMember = (db: Db, c: AdminChange, route: GroupRoute, groupId: string, m: MemberRef) =>
  changeMembers(db, c, route, groupId, m, 'group.member.removed', (tx, g) =>
    deleteMember(tx, c.realmId, g.id, m),
  );
