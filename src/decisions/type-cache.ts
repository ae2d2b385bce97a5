// Compiled relationship types per realm, kept while the realm's authorization revision stays the
// same. Every change to a type moves that revision (authorizationChanged), and the decision's
// one statement reads the revision with the liveness facts, so a stale entry is never used: when
// the revision moved, the same statement also brought the types (token-liveness.ts, DecisionQuery).
import type { CompiledType } from '../relationships/model.ts';
import { compileRows } from '../relationships/relationships.service.ts';

export interface TypeSet {
  revision: number;
  types: ReadonlyMap<string, CompiledType>;
}

const MAX_REALMS = 1000;
const cache = new Map<string, TypeSet>();

export const knownTypes = (realmId: string): TypeSet | undefined => cache.get(realmId);

/** Compiles the types a statement brought and keeps them for their revision. */
export function rememberTypes(
  realmId: string,
  revision: number,
  raw: Record<string, { relations: unknown; permissions: unknown }>,
): TypeSet {
  const rows = Object.entries(raw).map(([name, t]) => ({
    name,
    relations: (t.relations ?? {}) as Record<string, string[]>,
    permissions: (t.permissions ?? {}) as Record<string, string>,
  }));
  const set: TypeSet = { revision, types: compileRows(rows) };
  const current = cache.get(realmId);
  if (current && current.revision > revision) {
    // The database went back (a restore): the cached revision may be reached again with other
    // types, and the statement would then not bring them. What this statement read replaces it.
    cache.set(realmId, set);
  } else if (!current || current.revision < revision) {
    if (cache.size >= MAX_REALMS) cache.clear();
    cache.set(realmId, set);
  }
  return set;
}
