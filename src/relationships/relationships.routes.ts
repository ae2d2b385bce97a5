// The relationship model API under /api/v1/realms/{realm}/authorization (docs/authorization.md,
// "Relationship model API"): types and tuples, realm.relationships.write for changes and
// realm.relationships.read for reads.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { problem } from '../platform/http/problem.ts';
import {
  decodeTupleOps,
  decodeTupleQuery,
  decodeTypeBody,
  makeTupleCursor,
  typeNameParam,
} from './relationships.decode.ts';
import { findType, listTuples, listTypes, type TupleCursor, type TypeRow } from './relationships.repo.ts';
import { putType, removeType, writeTuples } from './relationships.service.ts';

const iso = (d: Date | string): string => new Date(d).toISOString();

export const presentType = (t: TypeRow) => ({
  name: t.name,
  relations: t.relations,
  permissions: t.permissions,
  version: t.version,
  created_at: iso(t.created_at),
  updated_at: iso(t.updated_at),
});

export function registerRelationshipRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.relationships.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.relationships.write'] } as const;

  apiRoute<{ type: string }>(app, ctx, 'PUT', '/authorization/types/:type', write, async (c) => {
    const name = typeNameParam(c.req.params.type);
    const body = decodeTypeBody(c.req.body);
    const { row, created } = await putType(ctx.db, c.call, name, body);
    return c.reply.code(created ? 201 : 200).send(presentType(row));
  });

  apiRoute(app, ctx, 'GET', '/authorization/types', read, async ({ realm }) => ({
    items: (await listTypes(ctx.db, realm.id)).map(presentType),
  }));

  apiRoute<{ type: string }>(app, ctx, 'GET', '/authorization/types/:type', read, async (c) => {
    const row = await findType(ctx.db, c.realm.id, typeNameParam(c.req.params.type));
    if (!row) throw problem.notFound('no such relationship type');
    return presentType(row);
  });

  apiRoute<{ type: string }>(app, ctx, 'DELETE', '/authorization/types/:type', write, async (c) => {
    await removeType(ctx.db, c.call, typeNameParam(c.req.params.type));
    return c.reply.code(204).send();
  });

  apiRoute(app, ctx, 'POST', '/authorization/tuples', write, async ({ req, call }) => {
    const ops = decodeTupleOps(req.body);
    return writeTuples(ctx.db, call, ops);
  });

  apiRoute(app, ctx, 'GET', '/authorization/tuples', read, async ({ req, realm }) => {
    const q = decodeTupleQuery(req.query, ctx.config.limits, `${realm.id}:GET /authorization/tuples`);
    const rows = await listTuples(ctx.db, realm.id, q.filter, q.after, q.limit + 1);
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    const more = rows.length > q.limit && last !== undefined;
    return {
      items: page.map((t) => ({
        object_type: t.object_type,
        object_id: t.object_id,
        relation: t.relation,
        subject_type: t.subject_type,
        subject_id: t.subject_id,
        ...(t.subject_relation !== '' ? { subject_relation: t.subject_relation } : {}),
        org_id: t.org_id,
        created_at: iso(t.created_at),
      })),
      next_cursor: more
        ? makeTupleCursor(
            [
              last.object_type,
              last.object_id,
              last.relation,
              last.subject_type,
              last.subject_id,
              last.subject_relation,
            ] as TupleCursor,
            q.binding,
          )
        : null,
    };
  });
}
