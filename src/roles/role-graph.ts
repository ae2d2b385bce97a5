// The rules a role definition must keep so that effective-roles.ts can expand it safely (doc 2,
// Limits: role expansion 64): composites form no cycle, stay within one assignment scope and
// boundary, and no role expands to more than 64 roles or to two roles incompatible with each other.
// Pure functions over the realm's role graph, unit-tested in role-graph.test.ts.

import type { FieldError } from '../platform/http/problem.ts';
import { MAX_ROLE_EXPANSION, permissionsOfRole } from './effective-roles.ts';
import type { RoleScope } from './permissions.ts';

export interface GraphRole {
  id: string;
  name: string;
  builtin: boolean;
  scope: RoleScope;
  organizationId: string | null;
  projectId: string | null;
  permissions: readonly string[];
  composites: readonly string[];
  incompatible: readonly string[];
}

export type RoleGraph = ReadonlyMap<string, GraphRole>;

/**
 * The roots and every role reachable through composites. Stops once the set holds more than
 * `limit` roles, so a caller learns "too many" without walking a huge graph.
 */
export function expand(
  graph: RoleGraph,
  roots: Iterable<string>,
  limit = Number.POSITIVE_INFINITY,
): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  while (queue.length > 0 && seen.size <= limit) {
    const id = queue.shift() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const c of graph.get(id)?.composites ?? []) if (!seen.has(c)) queue.push(c);
  }
  return seen;
}

/** Every permission the roles grant, built-in roles taking theirs from code. */
export function permissionsOfSet(graph: RoleGraph, ids: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const id of ids) {
    const r = graph.get(id);
    if (r)
      for (const p of permissionsOfRole({
        name: r.name,
        builtin: r.builtin,
        permissions: [...r.permissions],
      }))
        out.add(p);
  }
  return out;
}

/** Either role names the other as incompatible (the constraint is symmetric). */
export function areIncompatible(graph: RoleGraph, a: string, b: string): boolean {
  return (
    (graph.get(a)?.incompatible.includes(b) ?? false) || (graph.get(b)?.incompatible.includes(a) ?? false)
  );
}

/** The first incompatible pair, one from each set; null when none. */
export function incompatiblePair(
  graph: RoleGraph,
  left: Iterable<string>,
  right: Iterable<string>,
): [string, string] | null {
  const rights = [...right];
  for (const a of left) for (const b of rights) if (a !== b && areIncompatible(graph, a, b)) return [a, b];
  return null;
}

/**
 * Whether `other` can be a composite of, or incompatible with, `role`: it must be assignable in
 * the same scope and live in the same boundary or be realm-wide.
 */
export function sameScopeAndBoundary(role: GraphRole, other: GraphRole): boolean {
  if (other.scope !== role.scope) return false;
  if (role.scope === 'organization')
    return other.organizationId === null || other.organizationId === role.organizationId;
  if (role.scope === 'project') return other.projectId === role.projectId;
  return true;
}

/** Roles whose expansion contains `id` (itself included). */
function ancestorsOf(graph: RoleGraph, id: string): Set<string> {
  const parents = new Map<string, string[]>();
  for (const r of graph.values())
    for (const c of r.composites) parents.set(c, [...(parents.get(c) ?? []), r.id]);
  const out = new Set<string>();
  const queue = [id];
  while (queue.length > 0) {
    const x = queue.shift() as string;
    if (out.has(x)) continue;
    out.add(x);
    queue.push(...(parents.get(x) ?? []));
  }
  return out;
}

/**
 * What is wrong with `role` as it would be stored (the graph already holds it in that form):
 * unknown or out-of-scope references, a cycle, an expansion past the limit (for it and for every
 * role that contains it), or incompatible roles inside one expansion.
 */
export function roleGraphProblems(graph: RoleGraph, role: GraphRole): FieldError[] {
  const errors: FieldError[] = [];
  role.composites.forEach((id, i) => {
    const field = `composite_role_ids[${i}]`;
    const other = graph.get(id);
    if (id === role.id)
      errors.push({ field, code: 'composite_cycle', detail: 'a role cannot contain itself' });
    else if (!other) errors.push({ field, code: 'unknown_role', detail: 'no such role in this boundary' });
    else if (!sameScopeAndBoundary(role, other))
      errors.push({
        field,
        code: 'scope_mismatch',
        detail: 'a composite must be assignable in the same scope',
      });
  });
  role.incompatible.forEach((id, i) => {
    const field = `incompatible_role_ids[${i}]`;
    const other = graph.get(id);
    if (id === role.id)
      errors.push({ field, code: 'self_reference', detail: 'a role cannot exclude itself' });
    else if (!other) errors.push({ field, code: 'unknown_role', detail: 'no such role in this boundary' });
    else if (!sameScopeAndBoundary(role, other))
      errors.push({ field, code: 'scope_mismatch', detail: 'only roles of the same scope can be exclusive' });
  });
  if (errors.length > 0) return errors;
  const reachable = expand(graph, role.composites, MAX_ROLE_EXPANSION * 4);
  if (reachable.has(role.id)) {
    return [
      {
        field: 'composite_role_ids',
        code: 'composite_cycle',
        detail: 'the composites lead back to this role',
      },
    ];
  }
  for (const holder of ancestorsOf(graph, role.id)) {
    const set = expand(graph, [holder], MAX_ROLE_EXPANSION);
    if (set.size > MAX_ROLE_EXPANSION) {
      const detail =
        holder === role.id
          ? `the role would expand to more than ${MAX_ROLE_EXPANSION} roles`
          : `role ${holder} would expand to more than ${MAX_ROLE_EXPANSION} roles`;
      return [{ field: 'composite_role_ids', code: 'role_expansion_limit', detail }];
    }
    const pair = incompatiblePair(graph, set, set);
    if (pair) {
      return [
        {
          field: 'incompatible_role_ids',
          code: 'incompatible_within_role',
          detail: `role ${holder} would contain ${pair[0]} and ${pair[1]}, which exclude each other`,
        },
      ];
    }
  }
  return [];
}
