// HTTP edge of dynamic client registration (docs/oauth-registration.md):
// - POST /realms/{realm}/oauth/register (RFC 7591), with an initial access token as bearer or, when
//   the policy is open, without one;
// - GET, PUT, DELETE /realms/{realm}/oauth/register/{client_id} (RFC 7592), with the registration
//   access token as bearer, which every use replaces;
// - the administration API: initial access tokens and the approval queue, under realm.clients.write.
// The protocol endpoints answer refusals as RFC 7591 JSON (`error`, `error_description`) with the
// service's problem `code` beside them, so both OAuth libraries and problem readers understand them.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { hasNul } from '../kernel/text.ts';
import { bearerToken } from '../platform/http/bearer.ts';
import { networkOf } from '../platform/http/client-address.ts';
import {
  decodeBody,
  decodeNoBody,
  integer,
  nullable,
  object,
  optional,
  refine,
  string,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  dependencyOutage,
  logOutage,
} from '../platform/http/problem-mapper.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import {
  deleteRegistration,
  type RegistrationAnswer,
  RegistrationError,
  readRegistration,
  registerClient,
  replaceRegistration,
} from './client-registration.service.ts';
import type { ClientRecord } from './clients.repo.ts';
import type { InitialAccessTokenRow, RegistrationStatus } from './registration.repo.ts';
import {
  approveRegistration,
  createInitialAccessToken,
  initialAccessTokens,
  listClientRegistrations,
  MAX_INITIAL_ACCESS_TOKEN_USES,
  type QueueItem,
  rejectRegistration,
  revokeInitialAccess,
} from './registration-admin.service.ts';
import { presentTlsClientAuth } from './tls-client-auth-rules.ts';

const WRITE = { audience: 'admin', permissions: ['realm.clients.write'] } as const;
const epoch = (d: Date | string) => Math.floor(new Date(d).getTime() / 1000);
const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** RFC 7591 section 3.2.1 client information, with the approval state of this service. */
function clientInformation(ctx: ApiDeps, realmName: string, a: RegistrationAnswer) {
  const r = a.record;
  const issuer = issuerOf(ctx.config.server.publicOrigin, realmName);
  return {
    client_id: r.client_id,
    ...(a.clientSecret
      ? {
          client_secret: a.clientSecret,
          // RFC 7591: 0 means the secret does not expire.
          client_secret_expires_at: a.clientSecretExpiresAt ? epoch(a.clientSecretExpiresAt) : 0,
        }
      : {}),
    client_id_issued_at: epoch(r.created_at),
    ...(a.registrationToken ? { registration_access_token: a.registrationToken } : {}),
    registration_client_uri: `${issuer}/oauth/register/${encodeURIComponent(r.client_id)}`,
    client_name: r.name,
    redirect_uris: r.redirect_uris,
    post_logout_redirect_uris: r.post_logout_redirect_uris,
    grant_types: r.grant_types,
    response_types: ['code'],
    token_endpoint_auth_method: r.token_endpoint_auth_method,
    ...(r.jwks ? { jwks: r.jwks } : {}),
    ...presentTlsClientAuth(r.tls_client_auth),
    ...(r.backchannel_logout_uri ? { backchannel_logout_uri: r.backchannel_logout_uri } : {}),
    backchannel_logout_session_required: r.backchannel_logout_session_required,
    ...a.display,
    // Not an RFC 7591 member: whether the client waits for an administrator (docs/oauth-registration.md).
    approval_status: a.status,
  };
}

function sendInformation(
  reply: FastifyReply,
  ctx: ApiDeps,
  realmName: string,
  a: RegistrationAnswer,
  status: number,
) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send(clientInformation(ctx, realmName, a));
}

function registrationErrors(scope: FastifyInstance, ctx: ApiDeps): void {
  scope.setErrorHandler((thrown, req, reply) => {
    let err = thrown instanceof RegistrationError ? thrown : null;
    const outage = err ? null : dependencyOutage(thrown);
    if (outage) {
      logOutage(ctx.log, thrown, String(req.id));
      err = new RegistrationError(
        503,
        'temporarily_unavailable',
        outage.code,
        outage.detail ?? 'unavailable',
        [],
        {
          'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
        },
      );
    }
    if (!err) throw thrown;
    if (err.status === 429) ctx.metrics.rateLimited.inc({ surface: 'registration' });
    reply.code(err.status).headers({ 'cache-control': 'no-store', ...err.headers });
    return reply.type('application/json').send({
      error: err.error,
      error_description: err.description,
      code: err.code,
      ...(err.errors.length > 0 ? { errors: err.errors } : {}),
    });
  });
}

type RealmParams = { realm: string };
type ClientParams = RealmParams & { client: string };

async function realmOf(ctx: ApiDeps, name: string) {
  const realm = await findRequestedRealm(ctx, name);
  if (!realm) throw problem.notFound('no such realm');
  return realm;
}

const clientIdParam = (raw: string): string => (/^[\x21-\x7e]{1,128}$/.test(raw) && !hasNul(raw) ? raw : '');

export function registerClientRegistration(app: FastifyInstance, ctx: ApiDeps): void {
  app.register(async (scope) => {
    registrationErrors(scope, ctx);
    // An Authorization header that is not a usable bearer token is a wrong token, never no token:
    // it must not turn into an open (held) registration.
    const tokenOf = (auth: string | undefined) =>
      auth === undefined ? null : (bearerToken(auth, ctx.config.limits.maxTokenBytes) ?? '');

    scope.post<{ Params: RealmParams }>('/realms/:realm/oauth/register', async (req, reply) => {
      const realm = await realmOf(ctx, req.params.realm);
      const answer = await registerClient(ctx, realm, {
        body: req.body,
        token: tokenOf(req.headers.authorization),
        network: networkOf(req.clientAddress),
        correlationId: String(req.id),
        now: ctx.clock.now(),
      });
      return sendInformation(
        reply.header(
          'location',
          `${issuerOf(ctx.config.server.publicOrigin, realm.name)}/oauth/register/${encodeURIComponent(answer.record.client_id)}`,
        ),
        ctx,
        realm.name,
        answer,
        201,
      );
    });

    const management = (req: {
      headers: { authorization?: string | undefined };
      params: ClientParams;
      id: unknown;
    }) => ({
      clientId: clientIdParam(req.params.client),
      token: tokenOf(req.headers.authorization),
      correlationId: String(req.id),
      now: ctx.clock.now(),
    });

    scope.get<{ Params: ClientParams }>('/realms/:realm/oauth/register/:client', async (req, reply) => {
      const realm = await realmOf(ctx, req.params.realm);
      return sendInformation(
        reply,
        ctx,
        realm.name,
        await readRegistration(ctx, realm, management(req)),
        200,
      );
    });

    scope.put<{ Params: ClientParams }>('/realms/:realm/oauth/register/:client', async (req, reply) => {
      const realm = await realmOf(ctx, req.params.realm);
      const answer = await replaceRegistration(ctx, realm, { ...management(req), body: req.body });
      return sendInformation(reply, ctx, realm.name, answer, 200);
    });

    scope.delete<{ Params: ClientParams }>('/realms/:realm/oauth/register/:client', async (req, reply) => {
      const realm = await realmOf(ctx, req.params.realm);
      await deleteRegistration(ctx, realm, management(req));
      return reply.code(204).header('cache-control', 'no-store').send();
    });
  });

  registerAdministration(app, ctx);
}

// ---- administration API ------------------------------------------------------------------------

const decodeNewInitialAccessToken = object({
  max_uses: optional(integer({ min: 1, max: MAX_INITIAL_ACCESS_TOKEN_USES })),
  // Up to a year; absent: the token lives until revoked or used up.
  expires_in_seconds: nullable(optional(integer({ min: 60, max: 31_536_000 }))),
  description: optional(
    refine(
      string({ maxLength: 200 }),
      (v) => (/[\p{Cc}\p{Cf}]/u.test(v) ? 'no control characters' : null),
      'control_character',
    ),
  ),
});

const STATUSES: readonly RegistrationStatus[] = ['pending', 'approved', 'rejected', 'deleted'];

/** ?status=&limit= of the queue; anything else is 400 invalid_request (document 1, Errors). */
function queueQuery(raw: unknown, limits: { defaultPageSize: number; maxPageSize: number }) {
  const q = (raw ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(q)) {
    if ((k !== 'status' && k !== 'limit') || typeof v !== 'string')
      throw problem.invalidRequest('invalid query parameters', [{ field: k, code: 'unknown_member' }]);
  }
  const status = q.status === undefined ? null : STATUSES.find((s) => s === q.status);
  if (status === undefined)
    throw problem.invalidRequest('invalid query parameters', [{ field: 'status', code: 'not_allowed' }]);
  const rawLimit = q.limit === undefined ? null : String(q.limit);
  if (rawLimit !== null && (!/^[0-9]{1,9}$/.test(rawLimit) || Number(rawLimit) < 1))
    throw problem.invalidRequest('invalid query parameters', [{ field: 'limit', code: 'type' }]);
  // Larger pages are reduced (document 2, Limits).
  const limit = Math.min(rawLimit === null ? limits.defaultPageSize : Number(rawLimit), limits.maxPageSize);
  return { status, limit };
}

function presentToken(t: InitialAccessTokenRow, now: Date) {
  const expired = t.expires_at !== null && new Date(t.expires_at).getTime() <= now.getTime();
  const state = t.revoked_at ? 'revoked' : t.uses >= t.max_uses ? 'used_up' : expired ? 'expired' : 'active';
  return {
    id: t.id,
    description: t.description,
    max_uses: t.max_uses,
    uses: t.uses,
    state,
    expires_at: iso(t.expires_at),
    revoked_at: iso(t.revoked_at),
    last_used_at: iso(t.last_used_at),
    created_at: iso(t.created_at),
  };
}

function presentQueueItem({ registration: r, client: c }: QueueItem) {
  const summary = (x: ClientRecord) => ({
    client_id: x.client_id,
    name: x.name,
    type: x.type,
    state: x.state,
    redirect_uris: x.redirect_uris,
    post_logout_redirect_uris: x.post_logout_redirect_uris,
    grant_types: x.grant_types,
    token_endpoint_auth_method: x.token_endpoint_auth_method,
  });
  return {
    ...summary(c),
    status: r.status,
    initial_access_token_id: r.initial_access_token_id,
    metadata: r.metadata,
    created_at: iso(r.created_at),
    decided_at: iso(r.decided_at),
  };
}

function registerAdministration(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'POST', '/initial-access-tokens', WRITE, async ({ req, reply, call }) => {
    const input = decodeBody(decodeNewInitialAccessToken, req.body ?? {});
    const { row, token } = await createInitialAccessToken(
      ctx,
      {
        maxUses: input.maxUses ?? 1,
        expiresInSeconds: input.expiresInSeconds ?? null,
        description: input.description ?? null,
      },
      call,
    );
    // The token is shown once; only its digest is kept.
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ ...presentToken(row, call.now), token });
  });

  apiRoute(app, ctx, 'GET', '/initial-access-tokens', WRITE, async ({ realm }) => {
    const now = ctx.clock.now();
    return { items: (await initialAccessTokens(ctx, realm.id)).map((t) => presentToken(t, now)) };
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/initial-access-tokens/:id',
    WRITE,
    async ({ req, reply, call }) => {
      if (!/^iat_[0-9a-z]{26}$/.test(req.params.id)) throw problem.notFound('no such initial access token');
      await revokeInitialAccess(ctx, req.params.id, call);
      return reply.code(204).send();
    },
  );

  apiRoute(app, ctx, 'GET', '/client-registrations', WRITE, async ({ req, realm }) => {
    const q = queueQuery(req.query, ctx.config.limits);
    const items = await listClientRegistrations(ctx, realm.id, q.status, q.limit);
    return { items: items.map(presentQueueItem) };
  });

  for (const [action, decide] of [
    ['approve', approveRegistration],
    ['reject', rejectRegistration],
  ] as const) {
    apiRoute<{ client: string }>(
      app,
      ctx,
      'POST',
      `/client-registrations/:client/${action}`,
      WRITE,
      async ({ req, call }) => {
        decodeNoBody(req.body);
        const clientId = clientIdParam(req.params.client);
        if (clientId === '') throw problem.notFound('no such registration');
        return presentQueueItem(await decide(ctx, clientId, call));
      },
    );
  }
}
