// Answers relationship checks from the tuple graph (docs/authorization.md, "Relationship
// checks"; doc 2, Limits: decision depth 6, 64 object reads). Evaluation runs in rounds: each
// round evaluates every open check against the objects loaded so far, with "unknown" standing for
// an object not read yet; then all objects any check still needs are read in one statement. So a
// batch costs about one statement per level of the graph it walks, not one per object or check.
import type { Expr } from './expression.ts';
import type { CompiledType } from './model.ts';

export const MAX_DEPTH = 6;
export const MAX_OBJECT_READS = 64;

export interface TupleRow {
  object_type: string;
  object_id: string;
  relation: string;
  subject_type: string;
  subject_id: string;
  subject_relation: string;
  org_id: string | null;
}

export interface GraphSubject {
  type: 'user' | 'service_principal';
  id: string;
  /** Organizations with an active membership: `organization:<id>#member` holds the subject. */
  memberOrgIds: ReadonlySet<string>;
  /** Groups (ancestors included): `group:<id>#member` holds the subject. */
  groupIds: ReadonlySet<string>;
}

export interface GraphCheck {
  objectType: string;
  objectId: string;
  /** A relation or permission of objectType. */
  name: string;
  subject: GraphSubject;
  /** The effective organization: tuples of other organizations do not count. */
  orgId: string | null;
}

export type GraphOutcome =
  | 'allowed'
  | 'denied'
  | 'organization_mismatch'
  | 'depth_exceeded'
  | 'reads_exceeded';

export interface ObjectKey {
  type: string;
  id: string;
}

/** Reads every tuple of the given objects. */
export type LoadObjects = (keys: readonly ObjectKey[]) => Promise<TupleRow[]>;

// yes / no, not yet known (an object is still to be read), or over a limit.
type Tri = 'yes' | 'no' | 'unknown' | 'depth' | 'reads';

const keyOf = (type: string, id: string): string => `${type}\u0000${id}`;

function union(a: Tri, b: Tri): Tri {
  if (a === 'yes' || b === 'yes') return 'yes';
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  if (a !== 'no') return a;
  return b;
}

function intersection(a: Tri, b: Tri): Tri {
  if (a === 'no' || b === 'no') return 'no';
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  if (a !== 'yes') return a;
  return b;
}

function exclusion(a: Tri, b: Tri): Tri {
  if (a === 'no' || b === 'yes') return 'no';
  if (a === 'yes' && b === 'no') return 'yes';
  if (a === 'unknown' || b === 'unknown') return 'unknown';
  return a === 'yes' ? b : a;
}

interface LoadedObject {
  byRelation: Map<string, TupleRow[]>;
  orgIds: Set<string>;
}

/** One check's walk in one round. */
class Walk {
  readonly reads = new Set<string>();
  private readonly memo = new Map<string, Tri>();
  private readonly path = new Set<string>();
  overReads = false;
  private readonly types: ReadonlyMap<string, CompiledType>;
  private readonly loaded: ReadonlyMap<string, LoadedObject>;
  private readonly missing: Map<string, ObjectKey>;
  private readonly check: GraphCheck;

  constructor(
    types: ReadonlyMap<string, CompiledType>,
    loaded: ReadonlyMap<string, LoadedObject>,
    missing: Map<string, ObjectKey>,
    check: GraphCheck,
  ) {
    this.types = types;
    this.loaded = loaded;
    this.missing = missing;
    this.check = check;
  }

  object(type: string, id: string): LoadedObject | null {
    const key = keyOf(type, id);
    if (!this.reads.has(key)) {
      if (this.reads.size >= MAX_OBJECT_READS) {
        this.overReads = true;
        return null;
      }
      this.reads.add(key);
    }
    const o = this.loaded.get(key);
    if (!o) this.missing.set(key, { type, id });
    return o ?? null;
  }

  /** `name` (relation or permission) of type:id holds the subject. */
  holds(type: string, id: string, name: string, depth: number): Tri {
    if (depth > MAX_DEPTH) return 'depth';
    const def = this.types.get(type);
    if (!def) return 'no';
    const key = `${keyOf(type, id)}#${name}@${depth}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    // A name reached again on its own path adds nothing new: the other branches decide.
    const cycleKey = `${keyOf(type, id)}#${name}`;
    if (this.path.has(cycleKey)) return 'no';
    this.path.add(cycleKey);
    let out: Tri;
    const expr = def.permissions.get(name);
    if (expr) out = this.expr(type, id, expr, depth);
    else if (def.relations.has(name)) out = this.relation(type, id, name, depth);
    else out = 'no';
    this.path.delete(cycleKey);
    this.memo.set(key, out);
    return out;
  }

  private expr(type: string, id: string, e: Expr, depth: number): Tri {
    switch (e.kind) {
      case 'name':
        return this.holds(type, id, e.name, depth);
      case 'arrow':
        return this.arrow(type, id, e.relation, e.target, depth);
      case 'union':
        return union(this.expr(type, id, e.left, depth), this.expr(type, id, e.right, depth));
      case 'intersection':
        return intersection(this.expr(type, id, e.left, depth), this.expr(type, id, e.right, depth));
      case 'exclusion':
        return exclusion(this.expr(type, id, e.left, depth), this.expr(type, id, e.right, depth));
    }
  }

  private tuples(type: string, id: string, relation: string): TupleRow[] | Tri {
    const o = this.object(type, id);
    if (!o) return this.overReads ? 'reads' : 'unknown';
    const org = this.check.orgId;
    const rows = o.byRelation.get(relation) ?? [];
    return org === null ? rows : rows.filter((t) => t.org_id === null || t.org_id === org);
  }

  private relation(type: string, id: string, relation: string, depth: number): Tri {
    const rows = this.tuples(type, id, relation);
    if (!Array.isArray(rows)) return rows;
    const s = this.check.subject;
    let out: Tri = 'no';
    for (const t of rows) {
      if (t.subject_relation === '') {
        if (t.subject_type === s.type && t.subject_id === s.id) return 'yes';
        continue;
      }
      if (t.subject_relation === 'member') {
        if (t.subject_type === 'organization' && s.memberOrgIds.has(t.subject_id)) return 'yes';
        if (t.subject_type === 'group' && s.groupIds.has(t.subject_id)) return 'yes';
      }
      out = union(out, this.holds(t.subject_type, t.subject_id, t.subject_relation, depth + 1));
      if (out === 'yes') return out;
    }
    return out;
  }

  private arrow(type: string, id: string, relation: string, target: string, depth: number): Tri {
    const rows = this.tuples(type, id, relation);
    if (!Array.isArray(rows)) return rows;
    let out: Tri = 'no';
    for (const t of rows) {
      out = union(out, this.holds(t.subject_type, t.subject_id, target, depth + 1));
      if (out === 'yes') return out;
    }
    return out;
  }
}

function organizationMismatch(check: GraphCheck, loaded: ReadonlyMap<string, LoadedObject>): boolean | null {
  const o = loaded.get(keyOf(check.objectType, check.objectId));
  if (!o) return null;
  if (check.orgId === null) return false;
  for (const org of o.orgIds) if (org !== check.orgId) return true;
  return false;
}

/** Answers the checks in order; the types are the realm's compiled relationship types. */
export async function evaluateChecks(
  types: ReadonlyMap<string, CompiledType>,
  checks: readonly GraphCheck[],
  load: LoadObjects,
): Promise<GraphOutcome[]> {
  const loaded = new Map<string, LoadedObject>();
  const out: (GraphOutcome | null)[] = checks.map(() => null);
  for (;;) {
    const missing = new Map<string, ObjectKey>();
    for (let i = 0; i < checks.length; i++) {
      if (out[i] !== null) continue;
      const check = checks[i] as GraphCheck;
      const walk = new Walk(types, loaded, missing, check);
      // The object itself is read first: its organization decides before any relation does.
      walk.object(check.objectType, check.objectId);
      const mismatch = organizationMismatch(check, loaded);
      if (mismatch === true) {
        out[i] = 'organization_mismatch';
        continue;
      }
      if (mismatch === null) continue;
      const r = walk.holds(check.objectType, check.objectId, check.name, 1);
      if (r === 'yes') out[i] = 'allowed';
      else if (r === 'no') out[i] = 'denied';
      else if (r === 'depth') out[i] = 'depth_exceeded';
      else if (r === 'reads' || walk.overReads) out[i] = 'reads_exceeded';
    }
    if (missing.size === 0) break;
    const rows = await load([...missing.values()]);
    for (const k of missing.keys()) loaded.set(k, { byRelation: new Map(), orgIds: new Set() });
    for (const t of rows) {
      const o = loaded.get(keyOf(t.object_type, t.object_id));
      if (!o) continue;
      const list = o.byRelation.get(t.relation);
      if (list) list.push(t);
      else o.byRelation.set(t.relation, [t]);
      if (t.org_id !== null) o.orgIds.add(t.org_id);
    }
  }
  // Every check is decided once nothing is missing; anything still open had nothing to wait for.
  return out.map((o) => o ?? 'denied');
}
