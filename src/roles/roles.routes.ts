// HTTP edge of application permissions and roles (docs/api-roles.md): realm-wide under
// /permissions and /roles, one organization's roles under /organizations/{org}/roles. Each route
// is declared with its schemas (roles.schema.ts, docs/openapi.md).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { declaredApiRoute } from '../api/declared-route.ts';
import { liveOrgParam } from '../api/org-call.ts';
import { problem } from '../platform/http/problem.ts';
import { adminChange, etagOf } from './admin-call.ts';
import { decodePageQuery, pageOf } from './list-query.ts';
import { createPermission, removePermission } from './permissions.service.ts';
import { ORGANIZATION_PERMISSIONS, REALM_PERMISSIONS, SUPPORT_PERMISSIONS } from './permissions.ts';
import { findProjectRef } from './references.repo.ts';
import { idParam, permissionInput, roleInput } from './roles.decode.ts';
import { presentBuiltinPermission, presentPermission, presentRole } from './roles.present.ts';
import { listPermissions, listRoles, type RoleBoundary, type RoleRow } from './roles.repo.ts';
import { ROLE_ROUTES as R } from './roles.schema.ts';
import { createRole, getRole, type RoleRoute, removeRole, replaceRoleDefinition } from './roles.service.ts';

const BUILTIN_NAMES = [...REALM_PERMISSIONS, ...ORGANIZATION_PERMISSIONS, ...SUPPORT_PERMISSIONS];

export function registerRoleRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.roles.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.roles.write'] } as const;
  const orgRead = { audience: 'admin', permissions: ['org.roles.read'], organizationParam: 'org' } as const;
  const orgWrite = { audience: 'admin', permissions: ['org.roles.write'], organizationParam: 'org' } as const;
  const pages = ctx.config.limits;

  // ---- permissions ----

  declaredApiRoute(app, ctx, 'GET', '/permissions', read, R.listPermissions, async ({ req, realm }) => {
    const q = decodePageQuery(req.query, pages, `${realm.id}:GET /permissions`, ['builtin'] as const);
    const builtin = q.filters.builtin;
    if (builtin !== undefined && builtin !== 'true' && builtin !== 'false')
      throw problem.invalidRequest('builtin must be true or false');
    if (builtin === 'true') return { items: BUILTIN_NAMES.map(presentBuiltinPermission), next_cursor: null };
    const rows = await listPermissions(ctx.db, realm.id, q);
    // Permission rows have no id; their name is the key of the page.
    return pageOf(
      rows.map((r) => ({ ...r, id: r.name })),
      q,
      presentPermission,
    );
  });

  declaredApiRoute(
    app,
    ctx,
    'POST',
    '/permissions',
    write,
    R.createPermission,
    async ({ body, reply, caller, call }) => {
      const input = permissionInput(body);
      const row = await createPermission(ctx.db, adminChange(call, caller), input);
      return reply.code(201).send(presentPermission(row));
    },
  );

  declaredApiRoute(
    app,
    ctx,
    'DELETE',
    '/permissions/:name',
    write,
    R.deletePermission,
    async ({ req, reply, caller, call }) => {
      await removePermission(ctx.db, adminChange(call, caller), req.params.name);
      return reply.code(204).send();
    },
  );

  // ---- roles ----

  const listRoute = async (realmId: string, rawQuery: unknown, boundary: RoleBoundary, route: string) => {
    const q = decodePageQuery(rawQuery, pages, `${realmId}:${route}`, ['project_id'] as const);
    let b = boundary;
    if (q.filters.project_id !== undefined) {
      if (boundary.kind !== 'realm') throw problem.invalidRequest('unknown query parameter project_id');
      if (!(await findProjectRef(ctx.db, realmId, q.filters.project_id)))
        throw problem.notFound('no such project');
      b = { kind: 'project', id: q.filters.project_id };
    }
    return pageOf(await listRoles(ctx.db, realmId, b, q), q, presentRole);
  };
  const withEtag = (role: RoleRow) => ({ etag: etagOf(role.version), body: presentRole(role) });

  const itemRoutes = (
    prefix: string,
    auth: { r: typeof read | typeof orgRead; w: typeof write | typeof orgWrite },
    schemas: typeof R.realmItem | typeof R.orgItem,
  ) => {
    type P = { role: string; org?: string };
    // The two schemas' parameters differ by org; both name the role.
    const paramsOf = (params: unknown) => params as P;
    const routeOf = async (realmId: string, params: P): Promise<RoleRoute> =>
      params.org === undefined
        ? { kind: 'realm' }
        : { kind: 'organization', orgId: await liveOrgParam(ctx.db, realmId, params.org) };

    declaredApiRoute(
      app,
      ctx,
      'GET',
      `${prefix}/:role`,
      auth.r,
      schemas.read,
      async ({ req, reply, realm }) => {
        const route = await routeOf(realm.id, paramsOf(req.params));
        const role = await getRole(
          ctx.db,
          realm.id,
          route,
          idParam('rol', paramsOf(req.params).role, 'role'),
        );
        const out = withEtag(role);
        return reply.header('etag', out.etag).send(out.body);
      },
    );

    declaredApiRoute(
      app,
      ctx,
      'PUT',
      `${prefix}/:role`,
      auth.w,
      schemas.replace,
      async ({ req, body, reply, realm, caller, call }) => {
        const route = await routeOf(realm.id, paramsOf(req.params));
        const id = idParam('rol', paramsOf(req.params).role, 'role');
        const input = roleInput(body);
        const change = adminChange(call, caller);
        const role = await replaceRoleDefinition(ctx.db, change, route, id, input, req.headers['if-match']);
        const out = withEtag(role);
        return reply.header('etag', out.etag).send(out.body);
      },
    );

    declaredApiRoute(
      app,
      ctx,
      'DELETE',
      `${prefix}/:role`,
      auth.w,
      schemas.delete,
      async ({ req, reply, realm, caller, call }) => {
        const route = await routeOf(realm.id, paramsOf(req.params));
        const id = idParam('rol', paramsOf(req.params).role, 'role');
        await removeRole(ctx.db, adminChange(call, caller), route, id);
        return reply.code(204).send();
      },
    );
  };

  declaredApiRoute(app, ctx, 'GET', '/roles', read, R.listRoles, async ({ req, realm }) =>
    listRoute(realm.id, req.query, { kind: 'realm' }, 'GET /roles'),
  );

  declaredApiRoute(
    app,
    ctx,
    'POST',
    '/roles',
    write,
    R.createRole,
    async ({ body, reply, realm, caller, call }) => {
      const input = roleInput(body);
      const role = await createRole(ctx.db, adminChange(call, caller), { kind: 'realm' }, input);
      return reply
        .code(201)
        .header('etag', etagOf(role.version))
        .header('location', `/api/v1/realms/${realm.name}/roles/${role.id}`)
        .send(presentRole(role));
    },
  );

  itemRoutes('/roles', { r: read, w: write }, R.realmItem);

  declaredApiRoute(
    app,
    ctx,
    'GET',
    '/organizations/:org/roles',
    orgRead,
    R.listOrgRoles,
    async ({ req, realm }) => {
      const orgId = await liveOrgParam(ctx.db, realm.id, req.params.org);
      return listRoute(
        realm.id,
        req.query,
        { kind: 'organization', id: orgId },
        `GET /organizations/${orgId}/roles`,
      );
    },
  );

  declaredApiRoute(
    app,
    ctx,
    'POST',
    '/organizations/:org/roles',
    orgWrite,
    R.createOrgRole,
    async ({ req, body, reply, realm, caller, call }) => {
      const orgId = await liveOrgParam(ctx.db, realm.id, req.params.org);
      const input = roleInput(body);
      const change = adminChange(call, caller);
      const role = await createRole(ctx.db, change, { kind: 'organization', orgId }, input);
      return reply
        .code(201)
        .header('etag', etagOf(role.version))
        .header('location', `/api/v1/realms/${realm.name}/organizations/${orgId}/roles/${role.id}`)
        .send(presentRole(role));
    },
  );

  itemRoutes('/organizations/:org/roles', { r: orgRead, w: orgWrite }, R.orgItem);
}
