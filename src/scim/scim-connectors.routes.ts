// The administration API of SCIM connectors (docs/scim.md): list, create (the credential is in
// the 201 answer only), revoke.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeBody, object } from '../platform/http/decode.ts';
import { iso, plainText } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import { listConnectors, type ScimConnectorRow } from './scim-connectors.repo.ts';
import { createConnector, revokeConnector } from './scim-connectors.service.ts';

const present = (c: ScimConnectorRow) => ({
  id: c.id,
  name: c.name,
  state: c.revoked_at === null ? 'active' : 'revoked',
  created_at: iso(c.created_at),
  revoked_at: iso(c.revoked_at),
});

const createShape = object({ name: plainText(100, 1) });

export function registerScimConnectorRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.users.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.users.write'] } as const;

  apiRoute(app, ctx, 'GET', '/scim-connectors', read, async ({ req, realm }) => {
    const q = decodePageQuery(req.query, ctx.config.limits, `${realm.id}:GET /scim-connectors`, []);
    return pageOf(await listConnectors(ctx.db, realm.id, q), q, present);
  });

  apiRoute(app, ctx, 'POST', '/scim-connectors', write, async ({ req, reply, call }) => {
    const { name } = decodeBody(createShape, req.body);
    const { row, token } = await createConnector(ctx.db, call, name);
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ ...present(row), token });
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/scim-connectors/:id',
    write,
    async ({ req, reply, call }) => {
      await revokeConnector(ctx.db, call, idParam('scc', req.params.id, 'SCIM connector'));
      return reply.code(204).send();
    },
  );
}
