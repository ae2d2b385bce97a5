// The administration API of SCIM connectors (docs/scim.md): list, create (the credential is in
// the 201 answer only), revoke; the realm's under /scim-connectors (realm.users.*), an
// organization's under /organizations/{org}/scim-connectors (org.members.* inside it).
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
  organization_id: c.organization_id,
  state: c.revoked_at === null ? 'active' : 'revoked',
  created_at: iso(c.created_at),
  revoked_at: iso(c.revoked_at),
});

const createShape = object({ name: plainText(100, 1) });

export function registerScimConnectorRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const realmScope = {
    path: '/scim-connectors',
    read: { audience: 'admin', permissions: ['realm.users.read'] },
    write: { audience: 'admin', permissions: ['realm.users.write'] },
    orgOf: (_params: Params) => null,
  } as const;
  const orgScope = {
    path: '/organizations/:org/scim-connectors',
    read: { audience: 'admin', permissions: ['org.members.read'], organizationParam: 'org' },
    write: { audience: 'admin', permissions: ['org.members.write'], organizationParam: 'org' },
    orgOf: (params: Params) => idParam('org', params.org ?? '', 'organization'),
  } as const;
  for (const scope of [realmScope, orgScope]) {
    apiRoute<Params>(app, ctx, 'GET', scope.path, scope.read, async ({ req, realm }) => {
      const orgId = scope.orgOf(req.params);
      const q = decodePageQuery(
        req.query,
        ctx.config.limits,
        `${realm.id}:${orgId}:GET /scim-connectors`,
        [],
      );
      return pageOf(await listConnectors(ctx.db, realm.id, orgId, q), q, present);
    });

    apiRoute<Params>(app, ctx, 'POST', scope.path, scope.write, async ({ req, reply, call }) => {
      const { name } = decodeBody(createShape, req.body);
      const { row, token } = await createConnector(ctx.db, call, name, scope.orgOf(req.params));
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({ ...present(row), token });
    });

    apiRoute<Params & { id: string }>(
      app,
      ctx,
      'DELETE',
      `${scope.path}/:id`,
      scope.write,
      async ({ req, reply, call }) => {
        const id = idParam('scc', req.params.id, 'SCIM connector');
        await revokeConnector(ctx.db, call, id, scope.orgOf(req.params));
        return reply.code(204).send();
      },
    );
  }
}

type Params = { org?: string };
