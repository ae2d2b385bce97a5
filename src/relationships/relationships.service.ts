// Use cases of the relationship model: define, replace and delete types, write and delete tuples
// (docs/authorization.md, "Relationship model API"; doc 2, Limits: Relationships). Each write
// checks its rules, changes the rows, moves the realm's authorization revision and writes one
// audit record, in one transaction. The spec's event catalog has no relationship event, so
// nothing goes to the outbox.

import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db } from '../platform/db/db.ts';
import { type FieldError, problem } from '../platform/http/problem.ts';
import { type AffectedSubject, authorizationChanged } from '../roles/authz-revision.ts';
import type { ObjectKey } from './graph.ts';
import { allowsSubject, type CompiledType, compileType } from './model.ts';
import { MAX_TUPLES_PER_OBJECT, type TupleInput, type TypeBody } from './relationships.decode.ts';
import {
  deleteTuples,
  deleteType,
  existingOrganizations,
  insertTuples,
  listTypes,
  lockObjects,
  lockType,
  type NewTuple,
  objectsOverLimit,
  relationHasSubjectTypes,
  type TypeRow,
  typeHasTuples,
  upsertType,
} from './relationships.repo.ts';

export interface RelationshipCall extends Call {
  correlationId: string;
}

/**
 * Creates or replaces a type; 422 for an invalid definition, 409 when it drops relations, or
 * subject types of a relation, that tuples still use.
 */
export async function putType(
  db: Db,
  call: RelationshipCall,
  name: string,
  body: TypeBody,
): Promise<{ row: TypeRow; created: boolean }> {
  const compiled = compileType(name, body);
  if (!compiled.ok) throw problem.validation(compiled.errors, 'the relationship type is invalid');
  return inChange(db, call, async (tx, record) => {
    const current = await lockType(tx, call.realmId, name);
    if (current) {
      const dropped = Object.keys(current.relations).filter((r) => !(r in body.relations));
      if (dropped.length > 0 && (await typeHasTuples(tx, call.realmId, name, dropped))) {
        throw problem.conflict(`relations still holding tuples cannot be removed: ${dropped.join(', ')}`);
      }
      // A subject type taken away from a relation would leave grants the model no longer allows.
      const narrowed: string[] = [];
      for (const [relation, before] of Object.entries(current.relations)) {
        const after = body.relations[relation];
        if (!after) continue;
        const removed = before.filter((s) => !after.includes(s));
        if (removed.length > 0 && (await relationHasSubjectTypes(tx, call.realmId, name, relation, removed)))
          narrowed.push(`${relation} (${removed.join(', ')})`);
      }
      if (narrowed.length > 0) {
        throw problem.conflict(
          `subject types still holding tuples cannot be removed from: ${narrowed.join('; ')}`,
        );
      }
    }
    const row = await upsertType(tx, call.realmId, { name, ...body }, call.now);
    if (!row) throw new Error('upsert returned no row');
    await authorizationChanged(tx, call.realmId);
    await record.audit('authorization.type.written', {
      category: 'configuration',
      target: { type: 'authorization_type', id: name },
      data: {
        version: row.version,
        relations: Object.keys(body.relations),
        permissions: Object.keys(body.permissions),
      },
    });
    return { row, created: row.inserted };
  });
}

/** Deletes a type; 404 when unknown, 409 while tuples of it exist. */
export async function removeType(db: Db, call: RelationshipCall, name: string): Promise<void> {
  await inChange(db, call, async (tx, record) => {
    const current = await lockType(tx, call.realmId, name);
    if (!current) throw problem.notFound('no such relationship type');
    if (await typeHasTuples(tx, call.realmId, name)) {
      throw problem.conflict('the type still has tuples; delete them first');
    }
    await deleteType(tx, call.realmId, name);
    await authorizationChanged(tx, call.realmId);
    await record.audit('authorization.type.deleted', {
      category: 'configuration',
      target: { type: 'authorization_type', id: name },
    });
  });
}

const toTuple = (t: TupleInput): NewTuple => ({
  objectType: t.objectType,
  objectId: t.objectId,
  relation: t.relation,
  subjectType: t.subjectType,
  subjectId: t.subjectId,
  subjectRelation: t.subjectRelation ?? '',
  orgId: t.orgId ?? null,
});

/** Field errors of writes that do not fit their type (unknown type or relation, subject not allowed). */
function modelErrors(types: ReadonlyMap<string, CompiledType>, writes: readonly NewTuple[]): FieldError[] {
  const errors: FieldError[] = [];
  writes.forEach((t, i) => {
    const at = `writes[${i}]`;
    const type = types.get(t.objectType);
    if (!type)
      errors.push({ field: `${at}.object_type`, code: 'unknown_type', detail: 'no such relationship type' });
    else if (!type.relations.has(t.relation))
      errors.push({
        field: `${at}.relation`,
        code: 'unknown_relation',
        detail: `not a relation of ${t.objectType}`,
      });
    else if (!allowsSubject(type, t.relation, t.subjectType, t.subjectRelation)) {
      const given = t.subjectRelation === '' ? t.subjectType : `${t.subjectType}#${t.subjectRelation}`;
      errors.push({
        field: `${at}.subject_type`,
        code: 'subject_not_allowed',
        detail: `${t.objectType}#${t.relation} does not take ${given}`,
      });
    }
  });
  return errors;
}

export function compileRows(
  rows: readonly Pick<TypeRow, 'name' | 'relations' | 'permissions'>[],
): Map<string, CompiledType> {
  const out = new Map<string, CompiledType>();
  for (const r of rows) {
    const c = compileType(r.name, r);
    if (c.ok) out.set(r.name, c.type);
  }
  return out;
}

/** Writes and deletes tuples in one transaction. */
export async function writeTuples(
  db: Db,
  call: RelationshipCall,
  ops: { writes: TupleInput[]; deletes: TupleInput[] },
): Promise<{ written: number; deleted: number }> {
  const writes = ops.writes.map(toTuple);
  const deletes = ops.deletes.map(toTuple);
  return inChange(db, call, async (tx, record) => {
    const types = compileRows(await listTypes(tx, call.realmId));
    const errors = modelErrors(types, writes);
    const orgIds = [...new Set(writes.flatMap((t) => (t.orgId ? [t.orgId] : [])))];
    if (orgIds.length > 0) {
      const found = new Set((await existingOrganizations(tx, call.realmId, orgIds)).map((o) => o.id));
      writes.forEach((t, i) => {
        if (t.orgId && !found.has(t.orgId))
          errors.push({
            field: `writes[${i}].org_id`,
            code: 'unknown_organization',
            detail: 'no such organization',
          });
      });
    }
    if (errors.length > 0) throw problem.validation(errors, 'tuples do not fit the relationship model');
    const objects: ObjectKey[] = writes.map((t) => ({ type: t.objectType, id: t.objectId }));
    await lockObjects(tx, call.realmId, objects);
    const deleted = await deleteTuples(tx, call.realmId, deletes);
    const written = await insertTuples(tx, call.realmId, writes, call.now);
    if (written > 0) {
      const over = await objectsOverLimit(tx, call.realmId, objects, MAX_TUPLES_PER_OBJECT);
      const first = over[0];
      if (first) {
        throw problem.conflict(
          `object ${first.object_type}:${first.object_id} would hold ${first.n} tuples; at most ${MAX_TUPLES_PER_OBJECT} per object`,
        );
      }
    }
    const subjects = new Map<string, AffectedSubject>();
    for (const t of [...writes, ...deletes]) {
      if (t.subjectRelation === '' && (t.subjectType === 'user' || t.subjectType === 'service_principal'))
        subjects.set(`${t.subjectType}:${t.subjectId}`, { type: t.subjectType, id: t.subjectId });
    }
    await authorizationChanged(tx, call.realmId, [...subjects.values()]);
    await record.audit('authorization.tuples.written', {
      category: 'configuration',
      data: {
        writes: writes.length,
        deletes: deletes.length,
        written,
        deleted,
        object_types: [...new Set([...writes, ...deletes].map((t) => t.objectType))],
      },
    });
    return { written, deleted };
  });
}
