// HTTP edge of groups (docs/api-roles.md, Groups): realm-wide groups under /groups, one
// organization's groups under /organizations/{org}/groups, each with its members.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiAuthOptions } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { liveOrgParam } from '../api/org-call.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { adminChange, iso } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import { addMember, type MemberRef, removeMember } from './group-members.service.ts';
import { groupDecoders, MEMBER_TYPES } from './groups.decode.ts';
import { type GroupRow, listGroups, listMembers, type MemberRow } from './groups.repo.ts';
import { changeGroup, createGroup, deleteGroup, type GroupRoute, getGroup } from './groups.service.ts';

/** The export record "group" of doc 2, with the depth and a member count instead of the list. */
export const presentGroup = (g: GroupRow) => ({
  id: g.id,
  organization_id: g.organization_id,
  parent_id: g.parent_id,
  name: g.name,
  description: g.description,
  metadata: g.metadata,
  external_id: g.external_id,
  source: g.source,
  dynamic_rule: g.dynamic_rule ?? null,
  depth: g.depth,
  member_count: g.member_count,
  created_at: iso(g.created_at),
  updated_at: iso(g.updated_at),
});

const presentMember = (m: MemberRow) => ({
  subject_type: m.subject_type,
  subject_id: m.subject_id,
  created_at: iso(m.created_at),
});

function memberParam(type: string, id: string): MemberRef {
  if (!(MEMBER_TYPES as readonly string[]).includes(type)) throw problem.notFound('no such member type');
  return {
    type: type as MemberRef['type'],
    id: idParam(type === 'user' ? 'usr' : 'spr', id, type.replace('_', ' ')),
  };
}

export function registerGroupRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const pages = ctx.config.limits;
  const decode = groupDecoders(ctx.config.limits.metadataBytes);

  const register = (prefix: string, read: ApiAuthOptions, write: ApiAuthOptions) => {
    type P = { org?: string; group: string; subject_type: string; subject_id: string };
    const routeOf = async (realmId: string, params: { org?: string }): Promise<GroupRoute> =>
      params.org === undefined
        ? { kind: 'realm' }
        : { kind: 'organization', orgId: await liveOrgParam(ctx.db, realmId, params.org) };
    const groupId = (p: P) => idParam('grp', p.group, 'group');

    apiRoute<P>(app, ctx, 'GET', prefix, read, async ({ req, realm }) => {
      const route = await routeOf(realm.id, req.params);
      const orgId = route.kind === 'organization' ? route.orgId : null;
      const q = decodePageQuery(req.query, pages, `${realm.id}:GET groups ${orgId ?? ''}`, [
        'parent_id',
      ] as const);
      const rows = await listGroups(
        ctx.db,
        realm.id,
        orgId,
        q.filters.parent_id ? { parentId: q.filters.parent_id } : {},
        q,
      );
      return pageOf(rows, q, presentGroup);
    });

    apiRoute<P>(app, ctx, 'POST', prefix, write, async ({ req, reply, realm, caller, call }) => {
      const route = await routeOf(realm.id, req.params);
      const input = decode.decodeCreate(req.body);
      const g = await createGroup(ctx.db, adminChange(call, caller), route, input);
      return reply.code(201).send(presentGroup(g));
    });

    apiRoute<P>(app, ctx, 'GET', `${prefix}/:group`, read, async ({ req, realm }) => {
      const route = await routeOf(realm.id, req.params);
      return presentGroup(await getGroup(ctx.db, realm.id, route, groupId(req.params)));
    });

    apiRoute<P>(app, ctx, 'PATCH', `${prefix}/:group`, write, async ({ req, realm, caller, call }) => {
      const route = await routeOf(realm.id, req.params);
      const id = groupId(req.params);
      const input = decode.decodeUpdate(req.body);
      return presentGroup(await changeGroup(ctx.db, adminChange(call, caller), route, id, input));
    });

    apiRoute<P>(
      app,
      ctx,
      'DELETE',
      `${prefix}/:group`,
      write,
      async ({ req, reply, realm, caller, call }) => {
        const route = await routeOf(realm.id, req.params);
        await deleteGroup(ctx.db, adminChange(call, caller), route, groupId(req.params));
        return reply.code(204).send();
      },
    );

    apiRoute<P>(app, ctx, 'GET', `${prefix}/:group/members`, read, async ({ req, realm }) => {
      const route = await routeOf(realm.id, req.params);
      const g = await getGroup(ctx.db, realm.id, route, groupId(req.params));
      const q = decodePageQuery(req.query, pages, `${realm.id}:GET group members ${g.id}`, [] as const);
      return pageOf(await listMembers(ctx.db, realm.id, g.id, q), q, presentMember);
    });

    const member = `${prefix}/:group/members/:subject_type/:subject_id`;
    apiRoute<P>(app, ctx, 'PUT', member, write, async ({ req, reply, realm, caller, call }) => {
      decodeNoBody(req.body);
      const route = await routeOf(realm.id, req.params);
      const m = memberParam(req.params.subject_type, req.params.subject_id);
      await addMember(ctx.db, adminChange(call, caller), route, groupId(req.params), m);
      return reply.code(204).send();
    });

    apiRoute<P>(app, ctx, 'DELETE', member, write, async ({ req, reply, realm, caller, call }) => {
      const route = await routeOf(realm.id, req.params);
      const m = memberParam(req.params.subject_type, req.params.subject_id);
      await removeMember(ctx.db, adminChange(call, caller), route, groupId(req.params), m);
      return reply.code(204).send();
    });
  };

  register(
    '/groups',
    { audience: 'admin', permissions: ['realm.groups.read'] },
    { audience: 'admin', permissions: ['realm.groups.write'] },
  );
  register(
    '/organizations/:org/groups',
    { audience: 'admin', permissions: ['org.groups.read'], organizationParam: 'org' },
    { audience: 'admin', permissions: ['org.groups.write'], organizationParam: 'org' },
  );
}
