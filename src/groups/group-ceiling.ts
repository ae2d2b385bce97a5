// The delegation ceiling (docs/api-roles.md) for group changes: putting someone in a group, or
// putting a group under another, hands out every role the group and its ancestors hold. So the
// caller must hold, in each scope where those roles apply, every permission they grant with
// composites expanded. Without this, realm.groups.write or org.groups.write would be a way around
// the ceiling on /role-assignments.
import type { Tx } from '../platform/db/db.ts';
import type { AdminChange } from '../roles/admin-call.ts';
import {
  type AuthzContext,
  callerAuthority,
  ensureWithinCeiling,
  REALM_CONTEXT,
} from '../roles/delegation.ts';
import { loadRoleGraph } from '../roles/index.ts';
import { expand, permissionsOfSet } from '../roles/role-graph.ts';
import { rolesOfGroupChain } from './groups.repo.ts';

const contextOf = (scopeType: string, scopeId: string): AuthzContext =>
  scopeType === 'organization'
    ? { orgId: scopeId, projectId: null }
    : scopeType === 'project'
      ? { orgId: null, projectId: scopeId }
      : REALM_CONTEXT;

/**
 * 403 unless the caller holds what the group `chainOf` and its ancestors grant, and, for a move,
 * what the moved group `alsoGroup` holds itself. Runs before the change is written: a caller who
 * is a member of the group would otherwise already hold what it is about to be given.
 */
export async function ensureGroupWithinCeiling(
  tx: Tx,
  c: AdminChange,
  chainOf: string,
  alsoGroup: string | null = null,
): Promise<void> {
  const held = await rolesOfGroupChain(tx, c.realmId, chainOf, c.now, alsoGroup);
  if (held.length === 0) return;
  const realm = await callerAuthority(tx, c.realmId, c.caller, REALM_CONTEXT, c.now);
  if (realm.everything) return;
  const byScope = new Map<string, { type: string; id: string; roles: string[] }>();
  for (const h of held) {
    const key = `${h.scope_type}:${h.scope_id}`;
    const entry = byScope.get(key) ?? { type: h.scope_type, id: h.scope_id, roles: [] };
    entry.roles.push(h.role_id);
    byScope.set(key, entry);
  }
  const graph = await loadRoleGraph(tx, c.realmId);
  for (const scope of byScope.values()) {
    const authority =
      scope.type === 'realm'
        ? realm
        : await callerAuthority(tx, c.realmId, c.caller, contextOf(scope.type, scope.id), c.now);
    ensureWithinCeiling(authority, permissionsOfSet(graph, expand(graph, scope.roles)));
  }
}
