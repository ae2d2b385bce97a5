// HTTP edge of identity-provider connections (docs/federation.md, Connections): realm-wide under
// /identity-providers (realm.identity_providers.read and .write, spec doc 1, Authentication 5), and
// one organization's under /organizations/{org}/identity-providers for its administrators
// (org.identity_providers.read and .write held in the organization, or in the realm).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { apiRoute, type RequestCall } from '../api/api-route.ts';
import { inOrg, liveOrgParam } from '../api/org-call.ts';
import { cursorBinding, openCursor, pageBody, pageLimit, queryParams } from '../platform/http/keyset.ts';
import type { ConnectionRow } from './connection.ts';
import { decodeCreateConnection, decodePatchConnection } from './connections.decode.ts';
import {
  type ConnectionCall,
  type ConnectionDeps,
  type ConnectionScope,
  connectionEtag,
  createConnection,
  getConnection,
  listConnectionPage,
  patchConnection,
  removeConnection,
} from './connections.service.ts';

const READ = { audience: 'admin', permissions: ['realm.identity_providers.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.identity_providers.write'] } as const;
const ORG_READ = inOrg('org.identity_providers.read');
const ORG_WRITE = inOrg('org.identity_providers.write');

const CONNECTION_ID = /^idp_[0-9a-z]{26}$/;

const iso = (d: Date | string) => new Date(d).toISOString();

/** The wire form: every member the realm export names, never the secret itself. */
export const presentConnection = (c: ConnectionRow) => ({
  id: c.id,
  organization_id: c.organization_id,
  alias: c.alias,
  display_name: c.display_name,
  kind: c.kind,
  adapter: c.adapter,
  state: c.state,
  issuer: c.issuer,
  config: c.config,
  linking_policy: c.linking_policy,
  jit_provisioning: c.jit_provisioning,
  jit_default_role_id: c.jit_default_role_id,
  trust_upstream_mfa: c.trust_upstream_mfa,
  claim_mapping: c.claim_mapping,
  client_secret_set: c.client_secret_sealed !== null || c.client_secret_ref !== null,
  // SAML: the service-provider certificate the connection's metadata publishes.
  ...(c.kind === 'saml' ? { sp_certificate: c.sp_certificate } : {}),
  owner_user_id: c.owner_user_id,
  created_at: iso(c.created_at),
  updated_at: iso(c.updated_at),
});

const ifMatch = (req: FastifyRequest): string | undefined => {
  const v = req.headers['if-match'];
  return Array.isArray(v) ? v.join(', ') : v;
};

const withCaller = (call: RequestCall, caller: ApiCaller): ConnectionCall => ({ ...call, caller });

/** Path parameters of both families: `org` on the organization routes, `provider` on one connection. */
type Params = Record<string, string>;

export function registerConnectionRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const deps: ConnectionDeps = {
    db: ctx.db,
    keyring: ctx.keyring,
    environment: ctx.config.environment,
    fetchSamlMetadata: (url) => ctx.upstream.fetchSamlMetadata(url),
  };
  const pages = ctx.config.limits;

  /** The five routes of one scope: the realm's, or an organization's (resolved per request). */
  function family(
    base: string,
    auth: { read: typeof READ | typeof ORG_READ; write: typeof WRITE | typeof ORG_WRITE },
    scopeOf: (realmId: string, params: Params) => Promise<ConnectionScope>,
  ) {
    apiRoute<Params>(app, ctx, 'POST', base, auth.write, async ({ req, reply, realm, caller, call }) => {
      const input = decodeCreateConnection(req.body);
      const scope = await scopeOf(realm.id, req.params);
      const row = await createConnection(deps, withCaller(call, caller), scope, input);
      return reply
        .code(201)
        .header('etag', connectionEtag(row.version))
        .header('location', `/api/v1/realms/${realm.name}/identity-providers/${row.id}`)
        .send(presentConnection(row));
    });

    apiRoute<Params>(app, ctx, 'GET', base, auth.read, async ({ req, realm }) => {
      const scope = await scopeOf(realm.id, req.params);
      const param = queryParams(req.query, []);
      const limit = pageLimit(param('limit'), pages);
      const binding = cursorBinding([realm.id, 'identity-providers', scope]);
      const after = openCursor(param('cursor'), binding, (id) => CONNECTION_ID.test(id));
      const page = await listConnectionPage(deps, realm.id, scope, after, limit);
      return pageBody(page, presentConnection, binding);
    });

    apiRoute<Params>(app, ctx, 'GET', `${base}/:provider`, auth.read, async ({ req, reply, realm }) => {
      const scope = await scopeOf(realm.id, req.params);
      const row = await getConnection(deps, realm.id, scope, String(req.params.provider));
      return reply.header('etag', connectionEtag(row.version)).send(presentConnection(row));
    });

    apiRoute<Params>(
      app,
      ctx,
      'PATCH',
      `${base}/:provider`,
      auth.write,
      async ({ req, reply, realm, caller, call }) => {
        const patch = decodePatchConnection(req.body);
        const scope = await scopeOf(realm.id, req.params);
        const row = await patchConnection(
          deps,
          withCaller(call, caller),
          scope,
          String(req.params.provider),
          patch,
          ifMatch(req),
        );
        return reply.header('etag', connectionEtag(row.version)).send(presentConnection(row));
      },
    );

    apiRoute<Params>(
      app,
      ctx,
      'DELETE',
      `${base}/:provider`,
      auth.write,
      async ({ req, reply, realm, call }) => {
        const scope = await scopeOf(realm.id, req.params);
        await removeConnection(deps, call, scope, String(req.params.provider), ifMatch(req));
        return reply.code(204).send();
      },
    );
  }

  family('/identity-providers', { read: READ, write: WRITE }, async () => ({
    kind: 'realm',
  }));
  family(
    '/organizations/:org/identity-providers',
    { read: ORG_READ, write: ORG_WRITE },
    async (realmId, params) => ({
      kind: 'organization',
      organizationId: await liveOrgParam(ctx.db, realmId, String(params.org)),
    }),
  );
}
