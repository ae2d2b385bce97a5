// The organizations administration API under /api/v1/realms/{realm}/organizations
// (docs/api-organizations.md). Routes decode and authorize; the services own the transactions.
// Routes on one organization name it through organizationParam, so its own administrators
// (organization-scope roles of active members) are authorized too and others get 404.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { inOrg, type OrgParams, orgCall } from '../api/org-call.ts';
import { idempotencyKeyOf } from '../jobs/index.ts';
import { pageBody } from '../platform/http/keyset.ts';
import { decodeListQuery } from './list-query.ts';
import { registerMyOrganizationRoutes } from './me-organizations.routes.ts';
import { registerMembershipRoutes } from './memberships.routes.ts';
import {
  changeOrganizationState,
  deleteOrganization,
  type OrganizationStateChange,
} from './organization-state.service.ts';
import {
  decodeCreateOrganization,
  decodeDomain,
  decodeOptionalReason,
  decodePatchOrganization,
  domainParam,
  orgParam,
} from './organizations.decode.ts';
import {
  etagOf,
  type OrganizationView,
  presentDomain,
  presentOrganization,
} from './organizations.present.ts';
import {
  addDomain,
  createOrganization,
  listOrganizationPage,
  readOrganization,
  removeDomain,
  updateOrganization,
} from './organizations.service.ts';
import { ORGANIZATION_STATES } from './organizations.types.ts';

const ifMatchOf = (req: FastifyRequest): string | undefined => {
  const v = req.headers['if-match'];
  return Array.isArray(v) ? v.join(', ') : v;
};

export function registerOrganizationRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const { limits } = ctx.config;
  const withEtag = (view: OrganizationView) => ({ etag: etagOf(view.org), body: presentOrganization(view) });

  apiRoute(
    app,
    ctx,
    'POST',
    '/organizations',
    { audience: 'admin', permissions: ['realm.organizations.create'] },
    async ({ req, reply, caller, call }) => {
      const input = decodeCreateOrganization(req.body, limits.metadataBytes);
      const { etag, body } = withEtag(await createOrganization(ctx.db, orgCall(call, caller), input));
      return reply.code(201).header('etag', etag).send(body);
    },
  );

  apiRoute(
    app,
    ctx,
    'GET',
    '/organizations',
    { audience: 'admin', permissions: ['realm.organizations.read'] },
    async ({ req, realm }) => {
      const q = decodeListQuery(req.query, limits, `${realm.id}:GET /organizations`, /^org_[0-9a-z]{26}$/, {
        state: { values: ORGANIZATION_STATES.filter((s) => s !== 'deleted') },
        slug: { check: (v) => v.length > 0 && v.length <= 64 },
      });
      const page = await listOrganizationPage(ctx.db, realm.id, { ...q, ...q.filters });
      return pageBody(page, presentOrganization, q.binding);
    },
  );

  apiRoute<OrgParams>(
    app,
    ctx,
    'GET',
    '/organizations/:org',
    inOrg('org.read'),
    async ({ req, reply, realm }) => {
      const { etag, body } = withEtag(await readOrganization(ctx.db, realm.id, orgParam(req.params.org)));
      return reply.header('etag', etag).send(body);
    },
  );

  apiRoute<OrgParams>(
    app,
    ctx,
    'PATCH',
    '/organizations/:org',
    inOrg('org.update'),
    async ({ req, reply, caller, call }) => {
      const orgId = orgParam(req.params.org);
      const input = decodePatchOrganization(req.body, limits.metadataBytes);
      const view = await updateOrganization(ctx.db, orgCall(call, caller), orgId, input, ifMatchOf(req));
      const { etag, body } = withEtag(view);
      return reply.header('etag', etag).send(body);
    },
  );

  const stateRoute = (path: string, change: OrganizationStateChange) =>
    apiRoute<OrgParams>(
      app,
      ctx,
      'POST',
      `/organizations/:org/${path}`,
      inOrg('org.suspend'),
      async ({ req, reply, caller, call }) => {
        const orgId = orgParam(req.params.org);
        const reason = decodeOptionalReason(req.body);
        const view = await changeOrganizationState(ctx.db, orgCall(call, caller), orgId, change, reason);
        const { etag, body } = withEtag(view);
        return reply.header('etag', etag).send(body);
      },
    );
  stateRoute('suspend', 'suspend');
  stateRoute('reactivate', 'reactivate');
  stateRoute('archive', 'archive');

  apiRoute<OrgParams>(
    app,
    ctx,
    'DELETE',
    '/organizations/:org',
    { ...inOrg('org.delete'), recentAuth: true },
    async ({ req, reply, caller, call }) => {
      const orgId = orgParam(req.params.org);
      const started = await deleteOrganization(
        ctx.db,
        orgCall(call, caller),
        orgId,
        idempotencyKeyOf(req.headers),
      );
      return reply.code(202).send(started);
    },
  );

  apiRoute<OrgParams>(
    app,
    ctx,
    'POST',
    '/organizations/:org/domains',
    inOrg('org.domains.write'),
    async ({ req, reply, caller, call }) => {
      const orgId = orgParam(req.params.org);
      const domain = decodeDomain(req.body);
      const row = await addDomain(ctx.db, orgCall(call, caller), orgId, domain);
      return reply.code(201).send(presentDomain(row));
    },
  );

  apiRoute<OrgParams & { domain: string }>(
    app,
    ctx,
    'DELETE',
    '/organizations/:org/domains/:domain',
    inOrg('org.domains.write'),
    async ({ req, reply, caller, call }) => {
      const orgId = orgParam(req.params.org);
      await removeDomain(ctx.db, orgCall(call, caller), orgId, domainParam(req.params.domain));
      return reply.code(204).send();
    },
  );

  registerMembershipRoutes(app, ctx);
  registerMyOrganizationRoutes(app, ctx);
}
