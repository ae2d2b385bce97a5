// Role definitions (each role's name, built-in flag, permissions and composites) are configuration:
// a decision or an administration request reads the subject's assignments live (heldAssignmentsSql)
// and expands them here, from this process's copy of the realm's roles. The copy is keyed by the
// realm's roles_revision, which every change to a realm's roles moves in its own transaction
// (migrations/0023_roles_revision.sql). The statement that reads the assignments is given the
// revision of the copy and reads the realm's current one; when they differ it reads the
// definitions too, in the same snapshot as the assignments, so a changed role counts from its
// commit on every server and no answer mixes two states of the realm's roles (docs/decisions.md).

import { type AssignmentConditions, MAX_ROLE_EXPANSION, type RoleHolding } from './effective-roles.ts';
import type { RoleScope } from './permissions.ts';

interface RoleDefinition {
  name: string;
  builtin: boolean;
  permissions: string[];
  composites: readonly string[];
}

export interface RoleDefinitions {
  revision: number;
  byId: ReadonlyMap<string, RoleDefinition>;
}

/** An assignment as heldAssignmentsSql answers it: [role_id, scope_type, scope_id, conditions]. */
export type HeldAssignment = [string, RoleScope, string, AssignmentConditions | null];

/** A role as heldRolesSql answers it: [id, name, builtin, permissions, composite_role_ids]. */
type DefinitionRow = [string, string, boolean, string[], string[]];

/** What the live-check statement reads for one subject (heldRolesSql). */
export interface HeldRoles {
  revision: number | string;
  held: HeldAssignment[] | null;
  /** Every role of the realm, when `revision` is not that of the copy the statement was given. */
  roles: DefinitionRow[] | null;
}

// Realms whose definitions this process holds; past the cap the one unused longest is dropped.
const MAX_REALMS = 1000;
const cache = new Map<string, RoleDefinitions>();

/** This process's copy of the realm's role definitions, if it holds one (its revision is the statement's parameter). */
export function knownRoleDefinitions(realmId: string): RoleDefinitions | undefined {
  const defs = cache.get(realmId);
  if (defs !== undefined) {
    cache.delete(realmId);
    cache.set(realmId, defs);
  }
  return defs;
}

// What a statement read replaces the copy, whichever revision is newer: concurrent statements
// reading two revisions at worst make the next statement read the definitions again, and after a
// restore the database's revision may be below the copy's.
function remember(realmId: string, defs: RoleDefinitions): RoleDefinitions {
  cache.delete(realmId);
  cache.set(realmId, defs);
  if (cache.size > MAX_REALMS) cache.delete(cache.keys().next().value as string);
  return defs;
}

/**
 * An expression answering HeldRoles as JSON: the realm's roles_revision, the subject's held
 * assignments (`held`, heldAssignmentsSql) and, when the revision is not `knownRevision` (a
 * bigint expression, null when the process holds none), every role of the realm. `realmRow` is
 * the alias of the realm's row when the statement has it joined already.
 */
export function heldRolesSql(
  realmId: string,
  held: string,
  knownRevision: string,
  realmRow?: string,
): string {
  const rl = realmRow ?? 'rl';
  const value = `json_build_object('revision', ${rl}.roles_revision, 'held', ${held},
      'roles', case when ${rl}.roles_revision is distinct from ${knownRevision} then (select coalesce(json_agg(
        json_build_array(r.id, r.name, r.builtin, r.permissions, r.composite_role_ids)), '[]')
        from roles r where r.realm_id = ${realmId}) end)`;
  return realmRow ? value : `(select ${value} from realms rl where rl.id = ${realmId})`;
}

/**
 * The holdings the assignments give, composites expanded as effectiveRolesSql expands them: a
 * composite counts with the scope and conditions of the assignment it came through, up to
 * MAX_ROLE_EXPANSION roles deep (the assigned role is the first); a role id the realm no longer
 * defines gives nothing; one holding per role, scope and conditions.
 */
export function expandHeld(defs: RoleDefinitions, held: readonly HeldAssignment[]): RoleHolding[] {
  const out: RoleHolding[] = [];
  // Assignments of one scope and conditions expand together: breadth first, so each role is met
  // at the least depth any path reaches it.
  const contexts = new Map<string, { at: HeldAssignment; roots: string[] }>();
  for (const a of held) {
    const key = JSON.stringify([a[1], a[2], a[3]]);
    const c = contexts.get(key);
    if (c) c.roots.push(a[0]);
    else contexts.set(key, { at: a, roots: [a[0]] });
  }
  for (const { at, roots } of contexts.values()) {
    let level = [...new Set(roots)];
    const reached = new Set(level);
    for (let depth = 1; level.length > 0; depth++) {
      const next: string[] = [];
      for (const id of level) {
        const role = defs.byId.get(id);
        if (role === undefined) continue;
        out.push({
          name: role.name,
          builtin: role.builtin,
          permissions: role.permissions,
          scope_type: at[1],
          scope_id: at[2],
          conditions: at[3],
        });
        if (depth >= MAX_ROLE_EXPANSION) continue;
        for (const c of role.composites) {
          if (reached.has(c)) continue;
          reached.add(c);
          next.push(c);
        }
      }
      level = next;
    }
  }
  return out;
}

/**
 * The holdings a statement's HeldRoles give (null when it computed none). `known` is the copy whose
 * revision the statement was given: the definitions the statement read replace it, else it is of
 * the statement's revision.
 */
export function holdingsOf(
  realmId: string,
  known: RoleDefinitions | undefined,
  read: HeldRoles | null,
): RoleHolding[] | null {
  if (read === null) return null;
  const revision = Number(read.revision);
  let defs = known;
  if (read.roles !== null) {
    // Frozen: every holding of the role shares its permission list.
    const byId = new Map<string, RoleDefinition>(
      read.roles.map(([id, name, builtin, permissions, composites]) => [
        id,
        { name, builtin, permissions: Object.freeze(permissions) as string[], composites },
      ]),
    );
    defs = remember(realmId, { revision, byId });
  } else if (defs === undefined || defs.revision !== revision) {
    throw new Error('the live-check statement read no role definitions for a revision it was not given');
  }
  return read.held === null ? [] : expandHeld(defs, read.held);
}
