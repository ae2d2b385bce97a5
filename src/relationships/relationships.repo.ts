// SQL of relationship types and tuples (migrations/0007_organizations.sql: authz_types,
// authz_tuples). Every statement filters on realm_id.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import type { ObjectKey, TupleRow } from './graph.ts';

export interface TypeRow {
  name: string;
  relations: Record<string, string[]>;
  permissions: Record<string, string>;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export const findType = (q: Queryable, realmId: string, name: string) =>
  maybeOne<TypeRow>(
    q,
    `select name, relations, permissions, version, created_at, updated_at from authz_types
      where realm_id = $1 and name = $2`,
    [realmId, name],
  );

export const listTypes = (q: Queryable, realmId: string) =>
  many<TypeRow>(
    q,
    `select name, relations, permissions, version, created_at, updated_at from authz_types
      where realm_id = $1 order by name`,
    [realmId],
  );

export const lockType = (tx: Tx, realmId: string, name: string) =>
  maybeOne<TypeRow>(
    tx,
    `select name, relations, permissions, version, created_at, updated_at from authz_types
      where realm_id = $1 and name = $2 for update`,
    [realmId, name],
  );

/** Inserts or replaces a type; answers the stored row. */
export const upsertType = (
  tx: Tx,
  realmId: string,
  t: { name: string; relations: Record<string, string[]>; permissions: Record<string, string> },
  now: Date,
) =>
  maybeOne<TypeRow & { inserted: boolean }>(
    tx,
    `insert into authz_types (realm_id, name, relations, permissions, version, created_at, updated_at)
     values ($1, $2, $3, $4, 1, $5, $5)
     on conflict (realm_id, name) do update set relations = excluded.relations,
       permissions = excluded.permissions, version = authz_types.version + 1, updated_at = excluded.updated_at
     returning name, relations, permissions, version, created_at, updated_at, (xmax = 0) as inserted`,
    [realmId, t.name, JSON.stringify(t.relations), JSON.stringify(t.permissions), now],
  );

export const deleteType = (tx: Tx, realmId: string, name: string) =>
  tx.query('delete from authz_types where realm_id = $1 and name = $2', [realmId, name]);

/** Whether any tuple has an object of this type (and, given, this relation). */
export async function typeHasTuples(q: Queryable, realmId: string, type: string, relations?: string[]) {
  const r = await maybeOne<{ one: number }>(
    q,
    `select 1 as one from authz_tuples where realm_id = $1 and object_type = $2
        and ($3::text[] is null or relation = any ($3::text[])) limit 1`,
    [realmId, type, relations ?? null],
  );
  return r !== null;
}

const TUPLE_COLUMNS = 'object_type, object_id, relation, subject_type, subject_id, subject_relation, org_id';

/**
 * The tuples of these objects (the graph walk's one statement per round), at most `limit`, each
 * with whether its organization is active (tuples of an organization count only while it is).
 */
export const tuplesOfObjects = (q: Queryable, realmId: string, keys: readonly ObjectKey[], limit: number) =>
  many<TupleRow>(
    q,
    `select a.object_type, a.object_id, a.relation, a.subject_type, a.subject_id, a.subject_relation, a.org_id,
            case when a.org_id is not null then coalesce(o.state = 'active', false) end as org_active
       from authz_tuples a
       left join organizations o on a.org_id is not null and o.realm_id = a.realm_id and o.id = a.org_id
      where a.realm_id = $1 and (a.object_type, a.object_id) in (select * from unnest($2::text[], $3::text[]))
      limit $4`,
    [realmId, keys.map((k) => k.type), keys.map((k) => k.id), limit],
  );

/** Tuples of a relation of a type naming one of these subject types (`type` or `type#relation`). */
export async function relationHasSubjectTypes(
  q: Queryable,
  realmId: string,
  type: string,
  relation: string,
  subjectTypes: readonly string[],
): Promise<boolean> {
  const split = subjectTypes.map((s) => {
    const at = s.indexOf('#');
    return at < 0 ? [s, ''] : [s.slice(0, at), s.slice(at + 1)];
  });
  const r = await maybeOne<{ one: number }>(
    q,
    `select 1 as one from authz_tuples a
      where a.realm_id = $1 and a.object_type = $2 and a.relation = $3
        and (a.subject_type, a.subject_relation) in (select * from unnest($4::text[], $5::text[]))
      limit 1`,
    [realmId, type, relation, split.map((x) => x[0]), split.map((x) => x[1])],
  );
  return r !== null;
}

export interface TupleKey {
  objectType: string;
  objectId: string;
  relation: string;
  subjectType: string;
  subjectId: string;
  subjectRelation: string;
}

export interface NewTuple extends TupleKey {
  orgId: string | null;
}

const columnsOf = (ts: readonly TupleKey[]) => [
  ts.map((t) => t.objectType),
  ts.map((t) => t.objectId),
  ts.map((t) => t.relation),
  ts.map((t) => t.subjectType),
  ts.map((t) => t.subjectId),
  ts.map((t) => t.subjectRelation),
];

/** Writes tuples; one already present is left as it is (its org_id included). */
export async function insertTuples(tx: Tx, realmId: string, ts: readonly NewTuple[], now: Date) {
  if (ts.length === 0) return 0;
  const r = await tx.query(
    `insert into authz_tuples (realm_id, ${TUPLE_COLUMNS}, created_at)
     select $1, t.*, $9 from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) as t
     on conflict do nothing`,
    [realmId, ...columnsOf(ts), ts.map((t) => t.orgId), now],
  );
  return r.rowCount;
}

export async function deleteTuples(tx: Tx, realmId: string, ts: readonly TupleKey[]) {
  if (ts.length === 0) return 0;
  const r = await tx.query(
    `delete from authz_tuples a using unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
       as t(object_type, object_id, relation, subject_type, subject_id, subject_relation)
     where a.realm_id = $1 and a.object_type = t.object_type and a.object_id = t.object_id
       and a.relation = t.relation and a.subject_type = t.subject_type and a.subject_id = t.subject_id
       and a.subject_relation = t.subject_relation`,
    [realmId, ...columnsOf(ts)],
  );
  return r.rowCount;
}

/** Objects among these holding more than `max` tuples. */
export const objectsOverLimit = (tx: Tx, realmId: string, keys: readonly ObjectKey[], max: number) =>
  many<{ object_type: string; object_id: string; n: number }>(
    tx,
    `select a.object_type, a.object_id, count(*)::int as n from authz_tuples a
      where a.realm_id = $1 and (a.object_type, a.object_id) in (select * from unnest($2::text[], $3::text[]))
      group by a.object_type, a.object_id having count(*) > $4`,
    [realmId, keys.map((k) => k.type), keys.map((k) => k.id), max],
  );

/** Serializes writers of the same objects, so two requests cannot both pass the per-object limit. */
export async function lockObjects(tx: Tx, realmId: string, keys: readonly ObjectKey[]) {
  const sorted = [...new Set(keys.map((k) => JSON.stringify([realmId, k.type, k.id])))].sort();
  await tx.query('select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest($1::text[]) as k', [
    sorted,
  ]);
}

export const existingOrganizations = (q: Queryable, realmId: string, ids: readonly string[]) =>
  many<{ id: string }>(q, 'select id from organizations where realm_id = $1 and id = any ($2::text[])', [
    realmId,
    ids,
  ]);

export interface TupleFilter {
  objectType: string | null;
  objectId: string | null;
  relation: string | null;
  subjectType: string | null;
  subjectId: string | null;
}

export type TupleCursor = [string, string, string, string, string, string];

export const listTuples = (
  q: Queryable,
  realmId: string,
  f: TupleFilter,
  after: TupleCursor | null,
  limit: number,
) =>
  many<TupleRow & { created_at: Date }>(
    q,
    `select ${TUPLE_COLUMNS}, created_at from authz_tuples
      where realm_id = $1
        and ($2::text is null or object_type = $2) and ($3::text is null or object_id = $3)
        and ($4::text is null or relation = $4) and ($5::text is null or subject_type = $5)
        and ($6::text is null or subject_id = $6)
        and ($7::text is null or (object_type, object_id, relation, subject_type, subject_id, subject_relation)
              > ($7, $8, $9, $10, $11, $12))
      order by object_type, object_id, relation, subject_type, subject_id, subject_relation
      limit $13`,
    [
      realmId,
      f.objectType,
      f.objectId,
      f.relation,
      f.subjectType,
      f.subjectId,
      ...(after ?? [null, null, null, null, null, null]),
      limit,
    ],
  );
