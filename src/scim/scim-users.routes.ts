// SCIM Users (RFC 7644 §3): list with filter and paging, create, read, replace, patch, delete.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { listResponse, project, scimRoute, sendScim } from './scim-edge.routes.ts';
import { ScimError } from './scim-error.ts';
import { parseFilter } from './scim-filter.ts';
import { decodePaging, type IndexedKey, listResources } from './scim-list.ts';
import { decodePatch } from './scim-patch.ts';
import { decodeUserResource, etagOf, userResource } from './scim-user-resource.ts';
import { countScimUsers, findScimUsersBy, pageScimUsers, type ScimUserRow } from './scim-users.repo.ts';
import {
  createScimUser,
  deleteScimUser,
  getScimUser,
  patchScimUser,
  replaceScimUser,
  userScopeOf,
} from './scim-users.service.ts';

const USER_INDEXES: Record<string, IndexedKey> = {
  id: 'id',
  username: 'user_name',
  externalid: 'external_id',
};

const ifMatchOf = (h: string | string[] | undefined) => (Array.isArray(h) ? h.join(',') : h);

export function registerScimUserRoutes(scope: FastifyInstance, ctx: ApiDeps): void {
  scimRoute(scope, ctx, 'GET', '/Users', 'User', async (s, req, reply) => {
    const q = req.query;
    if (q.filter !== undefined && typeof q.filter !== 'string')
      throw new ScimError(400, 'invalidFilter', 'filter must be given once');
    const filter = typeof q.filter === 'string' ? parseFilter(q.filter) : null;
    const paging = decodePaging(q);
    const realmId = s.realm.id;
    const scope = userScopeOf(s.call);
    const { total, rows } = await listResources<ScimUserRow>(
      {
        byIndex: (key, value) =>
          findScimUsersBy(
            ctx.db,
            realmId,
            key === 'user_name' ? 'user_name' : key === 'id' ? 'id' : 'external_id',
            value,
            scope,
          ),
        count: () => countScimUsers(ctx.db, realmId, scope),
        page: (limit, offset) => pageScimUsers(ctx.db, realmId, limit, offset, scope),
        resource: (r) => userResource(r, s.base),
      },
      filter,
      USER_INDEXES,
      paging,
    );
    return sendScim(
      reply,
      200,
      listResponse(
        total,
        paging.startIndex,
        rows.map((r) => project(userResource(r, s.base), q)),
      ),
    );
  });

  scimRoute(scope, ctx, 'POST', '/Users', 'User', async (s, req, reply) => {
    const row = await createScimUser(ctx, s.call, decodeUserResource(req.body));
    reply.header('location', `${s.base}/Users/${row.user_id}`);
    return sendScim(reply, 201, userResource(row, s.base), etagOf(row.version));
  });

  scimRoute(scope, ctx, 'GET', '/Users/:id', 'User', async (s, req, reply) => {
    const row = await getScimUser(ctx.db, s.call, req.params.id as string);
    return sendScim(reply, 200, project(userResource(row, s.base), req.query), etagOf(row.version));
  });

  scimRoute(scope, ctx, 'PUT', '/Users/:id', 'User', async (s, req, reply) => {
    const input = decodeUserResource(req.body);
    const row = await replaceScimUser(
      ctx.db,
      s.call,
      req.params.id as string,
      input,
      ifMatchOf(req.headers['if-match']),
    );
    return sendScim(reply, 200, userResource(row, s.base), etagOf(row.version));
  });

  scimRoute(scope, ctx, 'PATCH', '/Users/:id', 'User', async (s, req, reply) => {
    const ops = decodePatch(req.body);
    const row = await patchScimUser(
      ctx.db,
      s.call,
      req.params.id as string,
      ops,
      s.base,
      ifMatchOf(req.headers['if-match']),
    );
    return sendScim(reply, 200, userResource(row, s.base), etagOf(row.version));
  });

  scimRoute(scope, ctx, 'DELETE', '/Users/:id', 'User', async (s, req, reply) => {
    await deleteScimUser(ctx.db, s.call, req.params.id as string, ifMatchOf(req.headers['if-match']));
    return reply.code(204).send();
  });
}
