// HTTP edge of API resources, client resource grants and introspectors (spec doc 1, Resources,
// grants and decisions). Decoding and presenting live here; rules live in resources.service.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import type { Actor } from '../audit/audit.types.ts';
import type { RealmRow } from '../realms/index.ts';
import type { ResourceScope } from './resource.ts';
import { decodeGrant, decodeIntrospector, decodeResource, etagOf } from './resources.decode.ts';
import type { GrantRecord, IntrospectorRecord } from './resources.repo.ts';
import {
  addIntrospector,
  createResource,
  getGrant,
  getResource,
  listClientGrants,
  listResourceIntrospectors,
  listResources,
  type ResourceCall,
  type ResourceView,
  removeGrant,
  removeIntrospector,
  replaceResource,
  setGrant,
} from './resources.service.ts';

// No read permission for resources exists in the catalogue (src/authz/permissions.ts), so reads
// need the write permission too.
const AUTH = { audience: 'admin', permissions: ['realm.resources.write'] } as const;

// ---- presenters ------------------------------------------------------------------------------

const presentScope = (s: ResourceScope) => ({
  name: s.name,
  required_permissions: s.requiredPermissions ?? [],
  ...(s.stepUpAcr ? { step_up_acr: s.stepUpAcr } : {}),
  ...(s.maxAuthAgeSeconds !== undefined ? { max_auth_age_seconds: s.maxAuthAgeSeconds } : {}),
  sensitivity: s.sensitivity ?? 'normal',
});

export function presentResource({ resource: r, createdAt, updatedAt }: ResourceView) {
  const p = r.impersonationPolicy;
  return {
    id: r.id,
    builtin: r.builtin,
    name: r.name,
    audience: r.audience,
    verification_mode: r.verificationMode,
    token_format: r.tokenFormat,
    access_token_ttl_seconds: r.accessTokenTtlSeconds,
    scopes: r.scopes.map(presentScope),
    requires_organization: r.requiresOrganization,
    impersonation_enabled: r.impersonationEnabled,
    impersonation_policy: p && {
      allowed_scopes: p.allowedScopes,
      write_scopes: p.writeScopes,
      write_actions: p.writeActions,
      support_client_ids: p.supportClientIds,
      contract_version: p.contractVersion,
    },
    signing_algorithm: r.signingAlgorithm,
    state: r.state,
    ...(createdAt ? { created_at: createdAt.toISOString() } : {}),
    ...(updatedAt ? { updated_at: updatedAt.toISOString() } : {}),
  };
}

export const presentGrant = (g: GrantRecord) => ({
  client_id: g.clientId,
  resource_id: g.resourceId,
  allowed_scopes: g.allowedScopes,
  subject_types: g.subjectTypes,
  exchange_policy: g.exchangePolicy && {
    accept_from_audiences: g.exchangePolicy.acceptFromAudiences,
    max_scopes: g.exchangePolicy.maxScopes,
  },
  created_at: g.createdAt.toISOString(),
  updated_at: g.updatedAt.toISOString(),
});

const presentIntrospector = (i: IntrospectorRecord) => ({
  client_id: i.clientId,
  created_at: i.createdAt.toISOString(),
});

// ---- routes ----------------------------------------------------------------------------------

const actorOf = (caller: ApiCaller): Actor => ({ type: caller.kind, id: caller.id });

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

type ResourceParams = { resource: string };
type ClientParams = { client: string };
type GrantParams = { client: string; resource: string };
type IntrospectorParams = { resource: string; client: string };

export function registerResourceRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const origin = ctx.config.server.publicOrigin;
  const call = (realm: RealmRow, caller: ApiCaller): ResourceCall => ({
    realm,
    publicOrigin: origin,
    actor: actorOf(caller),
    now: ctx.clock.now(),
  });

  apiRoute(app, ctx, 'GET', '/resources', AUTH, async ({ realm }) => ({
    items: (await listResources(ctx.db, realm, origin)).map(presentResource),
  }));

  apiRoute(app, ctx, 'POST', '/resources', AUTH, async ({ req, reply, realm, caller }) => {
    const input = decodeResource(req.body);
    const view = await createResource(ctx.db, call(realm, caller), input);
    return reply
      .code(201)
      .header('etag', etagOf(view.resource.version))
      .header('location', `/api/v1/realms/${realm.name}/resources/${view.resource.id}`)
      .send(presentResource(view));
  });

  apiRoute<ResourceParams>(app, ctx, 'GET', '/resources/:resource', AUTH, async ({ req, reply, realm }) => {
    const view = await getResource(ctx.db, realm, origin, req.params.resource);
    return reply.header('etag', etagOf(view.resource.version)).send(presentResource(view));
  });

  apiRoute<ResourceParams>(
    app,
    ctx,
    'PUT',
    '/resources/:resource',
    AUTH,
    async ({ req, reply, realm, caller }) => {
      const input = decodeResource(req.body);
      const view = await replaceResource(
        ctx.db,
        call(realm, caller),
        req.params.resource,
        input,
        header(req, 'if-match'),
      );
      return reply.header('etag', etagOf(view.resource.version)).send(presentResource(view));
    },
  );

  apiRoute<ResourceParams>(
    app,
    ctx,
    'GET',
    '/resources/:resource/introspectors',
    AUTH,
    async ({ req, realm }) => ({
      items: (await listResourceIntrospectors(ctx.db, realm, origin, req.params.resource)).map(
        presentIntrospector,
      ),
    }),
  );

  apiRoute<ResourceParams>(
    app,
    ctx,
    'POST',
    '/resources/:resource/introspectors',
    AUTH,
    async ({ req, reply, realm, caller }) => {
      const { client } = decodeIntrospector(req.body);
      const r = await addIntrospector(ctx.db, call(realm, caller), req.params.resource, client);
      return reply.code(r.created ? 201 : 200).send(presentIntrospector(r.introspector));
    },
  );

  apiRoute<IntrospectorParams>(
    app,
    ctx,
    'DELETE',
    '/resources/:resource/introspectors/:client',
    AUTH,
    async ({ req, reply, realm, caller }) => {
      await removeIntrospector(ctx.db, call(realm, caller), req.params.resource, req.params.client);
      return reply.code(204).send();
    },
  );

  apiRoute<ClientParams>(
    app,
    ctx,
    'GET',
    '/clients/:client/resource-grants',
    AUTH,
    async ({ req, realm }) => ({
      items: (await listClientGrants(ctx.db, realm, req.params.client)).map(presentGrant),
    }),
  );

  apiRoute<GrantParams>(
    app,
    ctx,
    'GET',
    '/clients/:client/resource-grants/:resource',
    AUTH,
    async ({ req, realm }) =>
      presentGrant(
        await getGrant(ctx.db, { realm, publicOrigin: origin }, req.params.client, req.params.resource),
      ),
  );

  apiRoute<GrantParams>(
    app,
    ctx,
    'PUT',
    '/clients/:client/resource-grants/:resource',
    AUTH,
    async ({ req, realm, caller }) => {
      const input = decodeGrant(req.body);
      const grant = await setGrant(
        ctx.db,
        call(realm, caller),
        req.params.client,
        req.params.resource,
        input,
      );
      return presentGrant(grant);
    },
  );

  apiRoute<GrantParams>(
    app,
    ctx,
    'DELETE',
    '/clients/:client/resource-grants/:resource',
    AUTH,
    async ({ req, reply, realm, caller }) => {
      await removeGrant(ctx.db, call(realm, caller), req.params.client, req.params.resource);
      return reply.code(204).send();
    },
  );
}
