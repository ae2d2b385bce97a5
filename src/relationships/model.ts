// Relationship types (spec doc 1, Authorization decision; doc 2, Limits: Relationships): a type
// names its relations, each with the subject types it may hold, and its permissions, each an
// expression over the type's relations and permissions. The rules a definition must meet live
// here, pure, so the write path and the evaluator read the same compiled form.
import type { FieldError } from '../platform/http/problem.ts';
import { arrowsOf, directNames, type Expr, localNames, NAME, parseExpression } from './expression.ts';

/** doc 2, Limits: Relationships. */
export const MAX_RELATIONS = 32;
export const MAX_PERMISSIONS = 64;
export const MAX_SUBJECT_TYPES = 20;

/** An allowed subject type: `type` (a subject itself) or `type#relation` (a subject set). */
export const SUBJECT_TYPE = /^[a-z][a-z0-9_]{0,62}(#[a-z][a-z0-9_]{0,62})?$/;

export interface TypeInput {
  relations: Record<string, string[]>;
  permissions: Record<string, string>;
}

export interface CompiledType {
  name: string;
  relations: ReadonlyMap<string, ReadonlySet<string>>;
  permissions: ReadonlyMap<string, Expr>;
}

export type CompileResult = { ok: true; type: CompiledType } | { ok: false; errors: FieldError[] };

/** Checks a definition: names, limits, expressions, references and cycles among permissions. */
export function compileType(name: string, input: TypeInput): CompileResult {
  const errors: FieldError[] = [];
  const err = (field: string, code: string, detail: string) => errors.push({ field, code, detail });
  if (!NAME.test(name)) err('type', 'pattern', 'lower-case letters, digits and _, starting with a letter');
  const relNames = Object.keys(input.relations);
  const permNames = Object.keys(input.permissions);
  if (relNames.length < 1 || relNames.length > MAX_RELATIONS)
    err('relations', relNames.length < 1 ? 'too_few' : 'too_many', `1 to ${MAX_RELATIONS} relations`);
  if (permNames.length < 1 || permNames.length > MAX_PERMISSIONS)
    err('permissions', permNames.length < 1 ? 'too_few' : 'too_many', `1 to ${MAX_PERMISSIONS} permissions`);
  if (errors.length > 0) return { ok: false, errors };

  const relations = new Map<string, ReadonlySet<string>>();
  for (const rel of relNames) {
    const field = `relations.${rel.slice(0, 64)}`;
    if (!NAME.test(rel)) err(field, 'pattern', 'lower-case letters, digits and _, starting with a letter');
    const allowed = input.relations[rel] ?? [];
    if (allowed.length < 1 || allowed.length > MAX_SUBJECT_TYPES)
      err(field, 'too_many', `1 to ${MAX_SUBJECT_TYPES} subject types`);
    for (const s of allowed)
      if (!SUBJECT_TYPE.test(s))
        err(field, 'pattern', `subject type "${s.slice(0, 64)}": type or type#relation`);
    relations.set(rel, new Set(allowed));
  }

  const permissions = new Map<string, Expr>();
  for (const perm of permNames) {
    const field = `permissions.${perm.slice(0, 64)}`;
    if (!NAME.test(perm)) err(field, 'pattern', 'lower-case letters, digits and _, starting with a letter');
    if (relations.has(perm)) err(field, 'duplicate', 'a relation has this name');
    const parsed = parseExpression(input.permissions[perm] ?? '');
    if (!parsed.ok) {
      err(field, 'syntax', parsed.error);
      continue;
    }
    for (const used of localNames(parsed.expr)) {
      if (!relations.has(used) && !(used in input.permissions))
        err(field, 'unknown_name', `"${used}" is neither a relation nor a permission of this type`);
    }
    for (const arrow of arrowsOf(parsed.expr)) {
      if (!relations.has(arrow.relation))
        err(field, 'arrow', `"${arrow.relation}->${arrow.target}" must follow a relation`);
    }
    permissions.set(perm, parsed.expr);
  }
  const cycle = findCycle(permissions);
  if (cycle)
    err(`permissions.${cycle[0]}`, 'cycle', `permissions refer to each other: ${cycle.join(' -> ')}`);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, type: { name, relations, permissions } };
}

/** A cycle among permissions through direct references (arrows cross objects, so they cannot loop here). */
function findCycle(perms: ReadonlyMap<string, Expr>): string[] | null {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (p: string): string[] | null => {
    const s = state.get(p);
    if (s === 'done') return null;
    if (s === 'visiting') return [...path.slice(path.indexOf(p)), p];
    state.set(p, 'visiting');
    path.push(p);
    const expr = perms.get(p);
    for (const next of expr ? directNames(expr) : []) {
      if (!perms.has(next)) continue;
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    state.set(p, 'done');
    return null;
  };
  for (const p of perms.keys()) {
    const found = visit(p);
    if (found) return found;
  }
  return null;
}

/** Whether a subject (or subject set) may be written into a relation. */
export function allowsSubject(
  type: CompiledType,
  relation: string,
  subjectType: string,
  subjectRelation: string,
) {
  const allowed = type.relations.get(relation);
  if (!allowed) return false;
  return allowed.has(subjectRelation === '' ? subjectType : `${subjectType}#${subjectRelation}`);
}

/** A relation or permission the type defines: what a decision may ask about. */
export const definesName = (type: CompiledType, name: string): boolean =>
  type.relations.has(name) || type.permissions.has(name);
