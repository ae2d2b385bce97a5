// Provisioning groups through SCIM (docs/scim.md) with the groups context's own changes: a realm
// connector's groups are the realm-wide ones, an organization connector's those of its
// organization. Changes: each rename, member added and member removed is one of its transactions with its audit
// record. A connector holds no roles, so under the delegation ceiling it manages the members of
// groups that grant no roles only; a group holding roles answers 403.

import {
  addMember,
  changeGroup,
  createGroup,
  deleteGroup,
  findGroup,
  type GroupRoute,
  type GroupRow,
  listGroups,
  listMembers,
  removeMember,
} from '../groups/index.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import type { AdminChange } from '../roles/admin-call.ts';
import { ScimError } from './scim-error.ts';
import { groupVersion, type ScimGroupInput } from './scim-group-resource.ts';
import type { ScimCall } from './scim-users.service.ts';

const BATCH = 1000;

/** Whose groups a connector provisions: the realm's, or one organization's. */
export interface ScimScope {
  realmId: string;
  organizationId: string | null;
}

const routeOf = (s: ScimScope): GroupRoute =>
  s.organizationId === null ? { kind: 'realm' } : { kind: 'organization', orgId: s.organizationId };

/** The connector as the groups context's caller: it holds no permission of its own. */
export const changeOf = (call: ScimCall): AdminChange => ({
  ...call,
  caller: {
    kind: 'service_principal',
    id: call.connectorId,
    permissions: new Set(),
    sessionMfa: false,
    authTime: null,
  },
});

const notFound = () => new ScimError(404, null, 'no such group');

export async function groupOf(q: Queryable, scope: ScimScope, id: string): Promise<GroupRow> {
  const g = await findGroup(q, scope.realmId, id);
  if (!g || g.organization_id !== scope.organizationId) throw notFound();
  return g;
}

/** Every user member of a group, in id order. */
export async function userMembersOf(q: Queryable, realmId: string, groupId: string): Promise<string[]> {
  const out: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page = await listMembers(q, realmId, groupId, { after, limit: BATCH });
    out.push(
      ...page
        .slice(0, BATCH)
        .filter((m) => m.subject_type === 'user')
        .map((m) => m.subject_id),
    );
    if (page.length <= BATCH) return out;
    after = page[BATCH - 1]?.id ?? null;
  }
}

/** The scope's groups in id order, at most `max` of them (one more tells there are more). */
export async function scopedGroups(q: Queryable, scope: ScimScope, max: number): Promise<GroupRow[]> {
  const out: GroupRow[] = [];
  let after: string | null = null;
  while (out.length <= max) {
    const page = await listGroups(q, scope.realmId, scope.organizationId, {}, { after, limit: BATCH });
    out.push(...page.slice(0, BATCH));
    if (page.length <= BATCH) break;
    after = page[BATCH - 1]?.id ?? null;
  }
  return out.slice(0, max + 1);
}

/** A member the realm does not know is a bad value in SCIM terms, not a missing resource. */
async function memberChange(run: () => Promise<void>, userId: string): Promise<void> {
  try {
    await run();
  } catch (e) {
    if (e instanceof Problem && e.status === 404)
      throw new ScimError(400, 'invalidValue', `no such user: ${userId}`);
    throw e;
  }
}

async function syncMembers(
  db: Db,
  c: AdminChange,
  route: GroupRoute,
  groupId: string,
  wanted: readonly string[],
): Promise<void> {
  const current = new Set(await userMembersOf(db, c.realmId, groupId));
  const next = new Set(wanted);
  for (const id of next)
    if (!current.has(id))
      await memberChange(() => addMember(db, c, route, groupId, { type: 'user', id }), id);
  for (const id of current)
    if (!next.has(id)) await removeMember(db, c, route, groupId, { type: 'user', id });
}

export async function createScimGroup(db: Db, call: ScimCall, input: ScimGroupInput): Promise<GroupRow> {
  const c = changeOf(call);
  const route = routeOf(call);
  const g = await createGroup(db, c, route, {
    name: input.displayName,
    ...(input.externalId === null ? {} : { externalId: input.externalId }),
  });
  if (input.members) await syncMembers(db, c, route, g.id, input.members);
  return groupOf(db, call, g.id);
}

export async function checkGroupIfMatch(db: Db, scope: ScimScope, id: string, ifMatch: string | undefined) {
  const g = await groupOf(db, scope, id);
  if (ifMatch === undefined) return g;
  const version = groupVersion(g, await userMembersOf(db, scope.realmId, id));
  const wanted = ifMatch.split(',').map((t) => t.trim());
  if (!wanted.includes('*') && !wanted.includes(version) && !wanted.includes(version.slice(2)))
    throw new ScimError(412, null, 'the resource changed since that version');
  return g;
}

/** PUT, and PATCH once applied: the name, external id and (when named) the members become these. */
export async function replaceScimGroup(
  db: Db,
  call: ScimCall,
  g: GroupRow,
  input: ScimGroupInput,
): Promise<GroupRow> {
  const c = changeOf(call);
  const route = routeOf(call);
  if (input.displayName !== g.name || input.externalId !== g.external_id)
    await changeGroup(db, c, route, g.id, { name: input.displayName, externalId: input.externalId });
  if (input.members) await syncMembers(db, c, route, g.id, input.members);
  return groupOf(db, call, g.id);
}

export async function deleteScimGroup(db: Db, call: ScimCall, id: string): Promise<void> {
  await groupOf(db, call, id);
  await deleteGroup(db, changeOf(call), routeOf(call), id);
}
