// HTTP edge of the clients administration API (docs/api-clients.md): each route declared with its
// schemas (clients.schema.ts, docs/openapi.md), authorized through apiRoute; call the service, present. Every route needs realm.clients.write (spec doc 1,
// Authentication 5 names no read permission for clients).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { declaredApiRoute } from '../api/declared-route.ts';
import type { Actor } from '../audit/audit.types.ts';
import { problem } from '../platform/http/problem.ts';
import { etagOf, setClientState, updateClient } from './client-changes.service.ts';
import { issueSecret, listSecrets, revokeSecret } from './client-secrets.service.ts';
import type { ClientSecretMetadata } from './client-secrets.ts';
import { decodeListQuery } from './clients.decode.ts';
import { CLIENT_ROUTES as R } from './clients.schema.ts';
import { type Change, type ClientView, createClient, getClient, listClients } from './clients.service.ts';
import { presentSamlSettings } from './saml-clients.ts';
import { presentTlsClientAuth } from './tls-client-auth-rules.ts';

export const WRITE = { audience: 'admin', permissions: ['realm.clients.write'] } as const;
// Reads show redirect URIs and key sets but never secrets; they need the same permission.
const READ = WRITE;

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function presentSecret(s: ClientSecretMetadata) {
  return {
    id: s.id,
    created_at: iso(s.createdAt),
    expires_at: iso(s.expiresAt),
    last_used_at: iso(s.lastUsedAt),
  };
}

export function presentClient({ record: r, secrets, saml }: ClientView) {
  return {
    id: r.id,
    client_id: r.client_id,
    name: r.name,
    description: r.description,
    type: r.type,
    state: r.state,
    builtin: r.builtin,
    redirect_uris: r.redirect_uris,
    post_logout_redirect_uris: r.post_logout_redirect_uris,
    allowed_origins: r.allowed_origins,
    grant_types: r.grant_types,
    token_endpoint_auth_method: r.token_endpoint_auth_method,
    consent_mode: r.consent_mode,
    token_policy: { require_mfa: r.require_mfa },
    allow_remember_me: r.allow_remember_me,
    id_token_claims: r.id_token_claims,
    require_pushed_authorization_requests: r.require_pushed_authorization_requests,
    backchannel_logout_uri: r.backchannel_logout_uri,
    backchannel_logout_session_required: r.backchannel_logout_session_required,
    jwks: r.jwks,
    ...presentTlsClientAuth(r.tls_client_auth),
    service_principal_id: r.service_principal_id,
    secrets: secrets.map(presentSecret),
    ...(saml ? { saml: presentSamlSettings(saml) } : {}),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

// A path segment that cannot be a client id names no client (and never reaches SQL with a NUL).
export function clientParam(raw: string): string {
  if (!/^[\x21-\x7e]{1,128}$/.test(raw)) throw problem.notFound('no such client');
  return raw;
}

export const actorOf = (caller: ApiCaller): Actor => ({ type: caller.kind, id: caller.id });

function sendClient(reply: FastifyReply, view: ClientView, status = 200) {
  return reply.code(status).header('etag', etagOf(view.record)).send(presentClient(view));
}

export function registerClientRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const change = (realmId: string, caller: ApiCaller, requestId: unknown): Change => ({
    realmId,
    actor: actorOf(caller),
    now: ctx.clock.now(),
    correlationId: String(requestId),
  });

  declaredApiRoute(
    app,
    ctx,
    'POST',
    '/clients',
    WRITE,
    R.create,
    async ({ req, body: input, reply, realm, caller }) => {
      const { view, issued } = await createClient(ctx, input, change(realm.id, caller, req.id));
      const body = {
        ...presentClient(view),
        // Shown once; only a keyed verifier is stored (RFC 7591 section 3.2.1 names).
        ...(issued ? { client_secret: issued.secret, client_secret_id: issued.id } : {}),
      };
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .header('etag', etagOf(view.record))
        .header(
          'location',
          `/api/v1/realms/${realm.name}/clients/${encodeURIComponent(view.record.client_id)}`,
        )
        .send(body);
    },
  );

  // The query stays with its reader (keyset cursor); the schema describes it.
  declaredApiRoute(app, ctx, 'GET', '/clients', READ, R.list, async ({ req, realm }) => {
    const query = decodeListQuery(req.query, ctx.config.limits);
    const page = await listClients(ctx, realm.id, query, ctx.clock.now());
    return { items: page.items.map(presentClient), next_cursor: page.nextCursor };
  });

  declaredApiRoute(app, ctx, 'GET', '/clients/:client', READ, R.read, async ({ req, reply, realm }) => {
    const view = await getClient(ctx, realm.id, req.params.client, ctx.clock.now());
    return sendClient(reply, view);
  });

  declaredApiRoute(
    app,
    ctx,
    'PATCH',
    '/clients/:client',
    WRITE,
    R.update,
    async ({ req, body, reply, realm, caller }) => {
      const ifMatch = req.headers['if-match'];
      const view = await updateClient(
        ctx,
        req.params.client,
        body,
        ifMatch,
        change(realm.id, caller, req.id),
      );
      return sendClient(reply, view);
    },
  );

  for (const [action, target] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    declaredApiRoute(
      app,
      ctx,
      'POST',
      `/clients/:client/${action}`,
      WRITE,
      R.setState,
      async ({ req, reply, realm, caller }) => {
        const view = await setClientState(ctx, req.params.client, target, change(realm.id, caller, req.id));
        return sendClient(reply, view);
      },
    );
  }

  declaredApiRoute(
    app,
    ctx,
    'POST',
    '/clients/:client/secrets',
    WRITE,
    R.issueSecret,
    async ({ req, body, reply, realm, caller }) => {
      const expiresAt = body.expiresAt === undefined ? null : new Date(body.expiresAt);
      const issued = await issueSecret(ctx, req.params.client, expiresAt, change(realm.id, caller, req.id));
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({
          ...presentSecret({ ...issued, lastUsedAt: null, revokedAt: null }),
          client_secret: issued.secret,
        });
    },
  );

  declaredApiRoute(
    app,
    ctx,
    'GET',
    '/clients/:client/secrets',
    READ,
    R.listSecrets,
    async ({ req, realm }) => {
      const secrets = await listSecrets(ctx, realm.id, req.params.client, ctx.clock.now());
      return { items: secrets.map(presentSecret) };
    },
  );

  declaredApiRoute(
    app,
    ctx,
    'DELETE',
    '/clients/:client/secrets/:secret',
    WRITE,
    R.revokeSecret,
    async ({ req, reply, realm, caller }) => {
      await revokeSecret(ctx, req.params.client, req.params.secret, change(realm.id, caller, req.id));
      return reply.code(204).send();
    },
  );
}
