// SCIM Groups (RFC 7644 §3) over the connector's groups (the realm's or its organization's): list with filter and paging, create,
// read, replace, patch (members added and removed one by one), delete.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { listResponse, project, scimRoute, sendScim } from './scim-edge.routes.ts';
import { ScimError } from './scim-error.ts';
import { parseFilter } from './scim-filter.ts';
import { matches } from './scim-filter-eval.ts';
import { decodeGroupResource, groupResource } from './scim-group-resource.ts';
import {
  checkGroupIfMatch,
  createScimGroup,
  deleteScimGroup,
  groupOf,
  replaceScimGroup,
  type ScimScope,
  scopedGroups,
  userMembersOf,
} from './scim-groups.service.ts';
import { decodePaging, MAX_EXAMINED } from './scim-list.ts';
import { applyPatch, decodePatch } from './scim-patch.ts';

const ifMatchOf = (h: string | string[] | undefined) => (Array.isArray(h) ? h.join(',') : h);

export function registerScimGroupRoutes(scope: FastifyInstance, ctx: ApiDeps): void {
  const present = async (scope: ScimScope, id: string, base: string) => {
    const g = await groupOf(ctx.db, scope, id);
    return groupResource(g, await userMembersOf(ctx.db, scope.realmId, id), base);
  };
  const answer = async (
    reply: Parameters<typeof sendScim>[0],
    scope: ScimScope,
    id: string,
    base: string,
    status = 200,
  ) => {
    const r = await present(scope, id, base);
    return sendScim(reply, status, r, (r.meta as { version: string }).version);
  };

  scimRoute(scope, ctx, 'GET', '/Groups', 'Group', async (s, req, reply) => {
    const q = req.query;
    if (q.filter !== undefined && typeof q.filter !== 'string')
      throw new ScimError(400, 'invalidFilter', 'filter must be given once');
    const filter = typeof q.filter === 'string' ? parseFilter(q.filter) : null;
    const paging = decodePaging(q);
    // Groups are listed by scanning them; beyond the bound only an id equality could be answered.
    const all = await scopedGroups(ctx.db, s.call, MAX_EXAMINED);
    if (all.length > MAX_EXAMINED)
      throw new ScimError(400, 'tooMany', `listing groups examines at most ${MAX_EXAMINED} of them`);
    // Filters see name and external id; members are not loaded for every group of the realm.
    const hits = filter ? all.filter((g) => matches(groupResource(g, [], s.base), filter)) : all;
    const page = hits.slice(paging.startIndex - 1, paging.startIndex - 1 + paging.count);
    const resources = await Promise.all(
      page.map(async (g) =>
        project(groupResource(g, await userMembersOf(ctx.db, s.realm.id, g.id), s.base), q),
      ),
    );
    return sendScim(reply, 200, listResponse(hits.length, paging.startIndex, resources));
  });

  scimRoute(scope, ctx, 'POST', '/Groups', 'Group', async (s, req, reply) => {
    const g = await createScimGroup(ctx.db, s.call, decodeGroupResource(req.body));
    reply.header('location', `${s.base}/Groups/${g.id}`);
    return answer(reply, s.call, g.id, s.base, 201);
  });

  scimRoute(scope, ctx, 'GET', '/Groups/:id', 'Group', async (s, req, reply) => {
    const r = await present(s.call, req.params.id as string, s.base);
    return sendScim(reply, 200, project(r, req.query), (r.meta as { version: string }).version);
  });

  scimRoute(scope, ctx, 'PUT', '/Groups/:id', 'Group', async (s, req, reply) => {
    const input = decodeGroupResource(req.body);
    const g = await checkGroupIfMatch(
      ctx.db,
      s.call,
      req.params.id as string,
      ifMatchOf(req.headers['if-match']),
    );
    await replaceScimGroup(ctx.db, s.call, g, input);
    return answer(reply, s.call, g.id, s.base);
  });

  scimRoute(scope, ctx, 'PATCH', '/Groups/:id', 'Group', async (s, req, reply) => {
    const ops = decodePatch(req.body);
    const id = req.params.id as string;
    const g = await checkGroupIfMatch(ctx.db, s.call, id, ifMatchOf(req.headers['if-match']));
    const current = groupResource(g, await userMembersOf(ctx.db, s.realm.id, id), s.base);
    const next = decodeGroupResource(applyPatch(current, ops));
    await replaceScimGroup(ctx.db, s.call, g, { ...next, members: next.members ?? [] });
    return answer(reply, s.call, id, s.base);
  });

  scimRoute(scope, ctx, 'DELETE', '/Groups/:id', 'Group', async (s, req, reply) => {
    await checkGroupIfMatch(ctx.db, s.call, req.params.id as string, ifMatchOf(req.headers['if-match']));
    await deleteScimGroup(ctx.db, s.call, req.params.id as string);
    return reply.code(204).send();
  });
}
