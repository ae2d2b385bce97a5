// Answers relationship checks from the tuple graph (docs/authorization.md, "Relationship
// checks"; doc 2, Limits: decision depth 6, 64 object reads). Evaluation runs in rounds: each
// round evaluates every open check against the objects loaded so far, with "unknown" standing for
// an object not read yet; then all objects any check still needs are read in one statement. So a
// batch costs about one statement per level of the graph it walks, not one per object or check.
import type { Expr } from './expression.ts';
import { allowsSubject, type CompiledType } from './model.ts';

export const MAX_DEPTH = 6;
export const MAX_OBJECT_READS = 64;
/**
 * Tuples one round may read for all its checks together. Not a doc 2 limit: 64 reads of objects
 * holding up to 1000 tuples each, times the checks of a batch, would otherwise be unbounded.
 */
export const MAX_ROWS_PER_ROUND = 10_000;

export interface TupleRow {
  object_type: string;
  object_id: string;
  relation: string;
  subject_type: string;
  subject_id: string;
  subject_relation: string;
  org_id: string | null;
  /** The tuple's organization is active; absent (or null) for tuples without one. */
  org_active?: boolean | null;
}

export interface GraphSubject {
  type: 'user' | 'service_principal';
  id: string;
  /** Organizations with an active membership: `organization:<id>#member` holds the subject. */
  memberOrgIds: ReadonlySet<string>;
  /**
   * Organizations whose tuples count for the subject (docs/authorization.md, "Organizations"):
   * a user's live memberships in active organizations, a service principal's allowed ones;
   * 'any' (a service principal allowed everywhere) still needs the organization active.
   */
  tupleOrgIds: ReadonlySet<string> | 'any';
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
  | 'reads_exceeded'
  | 'cycle';

export interface ObjectKey {
  type: string;
  id: string;
}

/** Reads every tuple of the given objects, at most `limit` rows (more means over the limit). */
export type LoadObjects = (keys: readonly ObjectKey[], limit: number) => Promise<TupleRow[]>;

// yes / no, not yet known (an object is still to be read), over a limit, or a cycle through an
// exclusion's subtracted side (no answer exists: the permission would depend on its own negation).
type Tri = 'yes' | 'no' | 'unknown' | 'depth' | 'reads' | 'cycle';

/**
 * An answer and the lowest path position of a cycle cut it assumed to be 'no' (Infinity: none
 * still open). Cuts only make answers smaller, and a yes never rests on one (an exclusion whose
 * subtracted side does is a 'cycle'), so only non-yes answers carry a position.
 */
interface Res {
  v: Tri;
  low: number;
}

const SETTLED = Number.POSITIVE_INFINITY;
const res = (v: Tri, low = SETTLED): Res => ({ v, low: v === 'yes' ? SETTLED : low });

const keyOf = (type: string, id: string): string => `${type}\u0000${id}`;

function union(a: Res, b: Res): Res {
  if (a.v === 'yes' || b.v === 'yes') return res('yes');
  const low = Math.min(a.low, b.low);
  if (a.v === 'unknown' || b.v === 'unknown') return res('unknown', low);
  return res(a.v !== 'no' ? a.v : b.v, low);
}

function intersection(a: Res, b: Res): Res {
  // One settled no is enough to settle the answer.
  if (a.v === 'no' && b.v === 'no') return res('no', Math.max(a.low, b.low));
  if (a.v === 'no') return a;
  if (b.v === 'no') return b;
  const low = Math.min(a.low, b.low);
  if (a.v === 'unknown' || b.v === 'unknown') return res('unknown', low);
  return res(a.v !== 'yes' ? a.v : b.v, low);
}

function exclusion(a: Res, b: Res): Res {
  if (a.v === 'no') return a;
  if (b.v === 'yes') return res('no');
  if (b.v === 'no') {
    if (a.v !== 'yes') return res(a.v, Math.min(a.low, b.low));
    // The subtracted side is 'no' only because a permission still being answered was assumed
    // 'no': a yes would rest on that permission's own negation.
    return b.low === SETTLED ? res('yes') : res('cycle', b.low);
  }
  const low = Math.min(a.low, b.low);
  if (a.v === 'unknown' || b.v === 'unknown') return res('unknown', low);
  return res(a.v === 'yes' ? b.v : a.v, low);
}

interface LoadedObject {
  byRelation: Map<string, TupleRow[]>;
  orgIds: Set<string>;
}

/** One check's walk in one round. */
class Walk {
  readonly reads = new Set<string>();
  private readonly memo = new Map<string, Res>();
  /** Names being answered on the current path, with their position on it. */
  private readonly path = new Map<string, number>();
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
  holds(type: string, id: string, name: string, depth: number): Res {
    if (depth > MAX_DEPTH) return res('depth');
    const def = this.types.get(type);
    if (!def) return res('no');
    const key = `${keyOf(type, id)}#${name}@${depth}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    // A name reached again on its own path adds nothing new: the other branches decide. The
    // answers built on that assumption hold only below this position (see the memo below).
    const cycleKey = `${keyOf(type, id)}#${name}`;
    const onPath = this.path.get(cycleKey);
    if (onPath !== undefined) return res('no', onPath);
    const position = this.path.size;
    this.path.set(cycleKey, position);
    let out: Res;
    const expr = def.permissions.get(name);
    if (expr) out = this.expr(type, id, expr, depth);
    else if (def.relations.has(name)) out = this.relation(type, id, name, depth);
    else out = res('no');
    this.path.delete(cycleKey);
    // Cuts of this name or below it are settled now; one of a name further up is not, and the
    // answer would be wrong on a branch that reaches this name without passing there.
    if (out.low >= position) out = res(out.v);
    if (out.low === SETTLED) this.memo.set(key, out);
    return out;
  }

  private expr(type: string, id: string, e: Expr, depth: number): Res {
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

  /** The tuples of a relation that count for this check, or why none can be known. */
  private tuples(type: string, id: string, relation: string): TupleRow[] | Res {
    const o = this.object(type, id);
    if (!o) return res(this.overReads ? 'reads' : 'unknown');
    const def = this.types.get(type);
    return (o.byRelation.get(relation) ?? []).filter(
      (t) =>
        // A subject type the relation no longer takes (the model was narrowed) grants nothing.
        def !== undefined &&
        allowsSubject(def, relation, t.subject_type, t.subject_relation) &&
        this.countsInOrganization(t),
    );
  }

  private countsInOrganization(t: TupleRow): boolean {
    if (t.org_id === null) return true;
    if (this.check.orgId !== null && t.org_id !== this.check.orgId) return false;
    const orgs = this.check.subject.tupleOrgIds;
    return t.org_active === true && (orgs === 'any' || orgs.has(t.org_id));
  }

  private relation(type: string, id: string, relation: string, depth: number): Res {
    const rows = this.tuples(type, id, relation);
    if (!Array.isArray(rows)) return rows;
    const s = this.check.subject;
    let out = res('no');
    for (const t of rows) {
      if (t.subject_relation === '') {
        if (t.subject_type === s.type && t.subject_id === s.id) return res('yes');
        continue;
      }
      if (t.subject_relation === 'member') {
        if (t.subject_type === 'organization' && s.memberOrgIds.has(t.subject_id)) return res('yes');
        if (t.subject_type === 'group' && s.groupIds.has(t.subject_id)) return res('yes');
      }
      out = union(out, this.holds(t.subject_type, t.subject_id, t.subject_relation, depth + 1));
      if (out.v === 'yes') return out;
    }
    return out;
  }

  private arrow(type: string, id: string, relation: string, target: string, depth: number): Res {
    const rows = this.tuples(type, id, relation);
    if (!Array.isArray(rows)) return rows;
    let out = res('no');
    for (const t of rows) {
      out = union(out, this.holds(t.subject_type, t.subject_id, target, depth + 1));
      if (out.v === 'yes') return out;
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
      const r = walk.holds(check.objectType, check.objectId, check.name, 1).v;
      if (r === 'yes') out[i] = 'allowed';
      else if (r === 'no') out[i] = 'denied';
      else if (r === 'depth') out[i] = 'depth_exceeded';
      else if (r === 'cycle') out[i] = 'cycle';
      else if (r === 'reads' || walk.overReads) out[i] = 'reads_exceeded';
    }
    if (missing.size === 0) break;
    const rows = await load([...missing.values()], MAX_ROWS_PER_ROUND + 1);
    if (rows.length > MAX_ROWS_PER_ROUND) {
      // Which open check asked for the rows over the limit is not known: all of them fail closed.
      for (let i = 0; i < out.length; i++) if (out[i] === null) out[i] = 'reads_exceeded';
      break;
    }
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
