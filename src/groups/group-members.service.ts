// Group members (docs/api-roles.md, Groups): users and service principals. Members of an
// organization's group must belong to that organization. Adding and removing are idempotent.
import { recordAudit } from '../audit/audit.repo.ts';
import type { AuditType } from '../audit/audit.types.ts';
import { authorizationChanged } from '../authz/authz-revision.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import type { AdminChange } from '../roles/admin-call.ts';
import {
  findCurrentMembership,
  findLivePrincipal,
  findLiveUser,
  principalAllowedIn,
} from '../roles/references.repo.ts';
import { lockAuthorization } from '../roles/roles.repo.ts';
import { deleteMember, type GroupRow, insertMember } from './groups.repo.ts';
import { type GroupRoute, getGroup } from './groups.service.ts';

export interface MemberRef {
  type: 'user' | 'service_principal';
  id: string;
}

async function ensureMayJoin(tx: Tx, realmId: string, g: GroupRow, m: MemberRef): Promise<void> {
  if (m.type === 'user') {
    if (!(await findLiveUser(tx, realmId, m.id))) throw problem.notFound('no such user');
    if (g.organization_id === null) return;
    const membership = await findCurrentMembership(tx, realmId, g.organization_id, m.id);
    if (membership?.state !== 'active')
      throw problem.conflict('only active members of the organization can join its groups');
    return;
  }
  const p = await findLivePrincipal(tx, realmId, m.id);
  if (!p) throw problem.notFound('no such service principal');
  if (g.organization_id !== null && !principalAllowedIn(p, g.organization_id))
    throw problem.conflict('the service principal may not act in the organization');
}

async function audit(tx: Tx, c: AdminChange, type: AuditType, g: GroupRow, m: MemberRef) {
  await recordAudit(
    tx,
    {
      realmId: c.realmId,
      type,
      category: 'security',
      actor: c.actor,
      subject: { type: m.type, id: m.id },
      target: { type: 'group', id: g.id },
      ...(g.organization_id ? { orgId: g.organization_id } : {}),
      correlationId: c.correlationId,
      data: { group_id: g.id },
    },
    c.now,
  );
}

export async function addMember(
  db: Db,
  c: AdminChange,
  route: GroupRoute,
  groupId: string,
  m: MemberRef,
): Promise<void> {
  await db.tx(async (tx) => {
    await lockAuthorization(tx, c.realmId);
    const g = await getGroup(tx, c.realmId, route, groupId);
    await ensureMayJoin(tx, c.realmId, g, m);
    if (!(await insertMember(tx, c.realmId, g.id, m, c.now))) return;
    await audit(tx, c, 'group.member.added', g, m);
    await authorizationChanged(tx, c.realmId, [m]);
  });
}

export async function removeMember(
  db: Db,
  c: AdminChange,
  route: GroupRoute,
  groupId: string,
  m: MemberRef,
): Promise<void> {
  await db.tx(async (tx) => {
    await lockAuthorization(tx, c.realmId);
    const g = await getGroup(tx, c.realmId, route, groupId);
    if (!(await deleteMember(tx, c.realmId, g.id, m))) return;
    await audit(tx, c, 'group.member.removed', g, m);
    await authorizationChanged(tx, c.realmId, [m]);
  });
}
