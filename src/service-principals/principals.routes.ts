// HTTP edge of service principals (docs/api-roles.md, Service principals).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { adminChange, iso } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import { decodeCreatePrincipal, decodeUpdatePrincipal } from './principals.decode.ts';
import { listPrincipals, type PrincipalRow } from './principals.repo.ts';
import {
  changePrincipal,
  changePrincipalState,
  createPrincipal,
  getPrincipal,
} from './principals.service.ts';

/** The export record "service_principal" of doc 2, plus the client behind it and updated_at. */
export const presentPrincipal = (p: PrincipalRow) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  owner_user_id: p.owner_user_id,
  owner_organization_id: p.owner_organization_id,
  state: p.state,
  allowed_organization_ids: p.allowed_organization_ids,
  is_agent: p.is_agent,
  client_id: p.client_id,
  created_at: iso(p.created_at),
  updated_at: iso(p.updated_at),
});

const STATES = ['active', 'disabled'];

export function registerServicePrincipalRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const pages = ctx.config.limits;
  const read = { audience: 'admin', permissions: ['realm.service_principals.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.service_principals.write'] } as const;
  type P = { id: string };
  const principalId = (p: P) => idParam('spr', p.id, 'service principal');

  apiRoute(app, ctx, 'GET', '/service-principals', read, async ({ req, realm }) => {
    const q = decodePageQuery(req.query, pages, `${realm.id}:GET /service-principals`, [
      'state',
      'owner_organization_id',
    ] as const);
    if (q.filters.state !== undefined && !STATES.includes(q.filters.state))
      throw problem.invalidRequest('state must be active or disabled');
    const rows = await listPrincipals(
      ctx.db,
      realm.id,
      {
        ...(q.filters.state ? { state: q.filters.state } : {}),
        ...(q.filters.owner_organization_id ? { ownerOrganizationId: q.filters.owner_organization_id } : {}),
      },
      q,
    );
    return pageOf(rows, q, presentPrincipal);
  });

  apiRoute(app, ctx, 'POST', '/service-principals', write, async ({ req, reply, caller, call }) => {
    const input = decodeCreatePrincipal(req.body);
    const p = await createPrincipal(ctx.db, adminChange(call, caller), input);
    return reply.code(201).send(presentPrincipal(p));
  });

  apiRoute<P>(app, ctx, 'GET', '/service-principals/:id', read, async ({ req, realm }) =>
    presentPrincipal(await getPrincipal(ctx.db, realm.id, principalId(req.params))),
  );

  apiRoute<P>(app, ctx, 'PATCH', '/service-principals/:id', write, async ({ req, caller, call }) => {
    const id = principalId(req.params);
    const input = decodeUpdatePrincipal(req.body);
    return presentPrincipal(await changePrincipal(ctx.db, adminChange(call, caller), id, input));
  });

  for (const action of ['disable', 'enable'] as const) {
    apiRoute<P>(
      app,
      ctx,
      'POST',
      `/service-principals/:id/${action}`,
      write,
      async ({ req, caller, call }) => {
        decodeNoBody(req.body);
        const id = principalId(req.params);
        const change = adminChange(call, caller);
        return presentPrincipal(await changePrincipalState(ctx.db, change, id, action));
      },
    );
  }

  apiRoute<P>(app, ctx, 'DELETE', '/service-principals/:id', write, async ({ req, reply, caller, call }) => {
    await changePrincipalState(ctx.db, adminChange(call, caller), principalId(req.params), 'delete');
    return reply.code(204).send();
  });
}
