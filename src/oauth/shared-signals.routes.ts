// Shared Signals transmitter endpoints of a realm (OpenID SSF 1.0; docs/logout-and-signals.md):
// the transmitter configuration metadata, and the stream configuration, status and verification
// endpoints. They answer 404 while the realm's shared_signals.enabled is off (document 1, policy
// table: off by default). A receiver is a confidential client of the realm and authenticates with
// its client credentials (HTTP Basic), as at introspection; it manages its own one push stream.
// Every change commits with its audit record.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { authenticateOAuthClient, useOAuthErrors } from '../api/oauth-endpoint.ts';
import { recordAudit } from '../audit/index.ts';
import { pushReceiverUriProblem } from '../clients/index.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import type { Tx } from '../platform/db/db.ts';
import { array, enumOf, object, optional, string } from '../platform/http/decode.ts';
import { type FieldError, problem } from '../platform/http/problem.ts';
import { currentPolicy, policyValue, type RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import {
  deleteStream,
  findStreamOfClient,
  insertStream,
  queueVerification,
  type StreamRow,
  setStreamStatus,
  updateStream,
} from './shared-signals.repo.ts';

export const PUSH_DELIVERY = 'urn:ietf:rfc:8935';
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type/';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type/';
/** The event types this transmitter emits (and which changes emit them: docs/logout-and-signals.md). */
export const EVENTS_SUPPORTED = [
  `${CAEP}session-revoked`,
  `${CAEP}credential-change`,
  `${RISC}account-disabled`,
] as const;
const MAX_EVENTS_REQUESTED = 20;
const MAX_DESCRIPTION = 500;

const delivery = object({ method: string({ maxLength: 256 }), endpoint_url: string() });
const eventsRequested = array(string({ maxLength: 256 }), { maxItems: MAX_EVENTS_REQUESTED });
const streamId = string({ minLength: 1, maxLength: 64 });
const decodeCreate = object({
  delivery,
  events_requested: eventsRequested,
  description: optional(string({ maxLength: MAX_DESCRIPTION })),
});
const decodeUpdate = object({
  stream_id: streamId,
  delivery: optional(delivery),
  events_requested: optional(eventsRequested),
  description: optional(string({ maxLength: MAX_DESCRIPTION })),
});
const decodeStatus = object({
  stream_id: streamId,
  status: enumOf(['enabled', 'paused', 'disabled'] as const),
  reason: optional(string({ maxLength: MAX_DESCRIPTION })),
});
const decodeVerify = object({ stream_id: streamId, state: optional(string({ maxLength: 256 })) });

type Req = FastifyRequest<{ Params: { realm: string } }>;

interface Caller {
  realm: RealmRow;
  clientId: string;
  now: Date;
  correlationId: string;
}

async function enabledRealm(ctx: ApiDeps, name: string): Promise<RealmRow> {
  const realm = await findRequestedRealm(ctx, name);
  if (!realm) throw problem.notFound('no such realm');
  const policy = await currentPolicy(ctx.db, realm.id);
  if (policyValue(policy, 'shared_signals', 'enabled') !== true)
    throw problem.notFound('shared signals are not enabled in this realm');
  return realm;
}

async function authenticate(ctx: ApiDeps, req: Req, reply: FastifyReply): Promise<Caller> {
  const realm = await enabledRealm(ctx, req.params.realm);
  const now = ctx.clock.now();
  const { client } = await authenticateOAuthClient(
    ctx,
    { req, reply, realm, form: new URLSearchParams() },
    'ssf',
    now,
  );
  // A receiver must prove who it is: a public client has nothing to prove it with.
  if (client.token_endpoint_auth_method === 'none')
    throw oauthError.invalidClient({ debug: 'public_client_ssf' });
  reply.header('cache-control', 'no-store');
  return { realm, clientId: client.client_id, now, correlationId: String(req.id) };
}

function present(ctx: ApiDeps, realm: RealmRow, s: StreamRow) {
  return {
    stream_id: s.id,
    iss: issuerOf(ctx.config.server.publicOrigin, realm.name),
    aud: s.client_id,
    delivery: { method: PUSH_DELIVERY, endpoint_url: s.endpoint_url },
    events_supported: [...EVENTS_SUPPORTED],
    events_requested: s.events_requested,
    events_delivered: s.events_delivered,
    ...(s.description === null ? {} : { description: s.description }),
  };
}

function checkDelivery(ctx: ApiDeps, d: { method: string; endpointUrl: string }, errors: FieldError[]): void {
  if (d.method !== PUSH_DELIVERY)
    errors.push({ field: 'delivery.method', code: 'not_allowed', detail: `only ${PUSH_DELIVERY} (push)` });
  const why = pushReceiverUriProblem(d.endpointUrl, ctx.config.environment);
  if (why) errors.push({ field: 'delivery.endpoint_url', code: 'invalid_uri', detail: why });
}

const delivered = (requested: string[]) =>
  (EVENTS_SUPPORTED as readonly string[]).filter((t) => requested.includes(t));

function queryStreamId(req: FastifyRequest): string | null {
  const q = (req.query ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(q))
    if (k !== 'stream_id')
      throw problem.invalidRequest('invalid query parameters', [{ field: k, code: 'unknown_member' }]);
  const v = q.stream_id;
  if (v === undefined) return null;
  if (typeof v !== 'string' || v === '') throw problem.invalidRequest('stream_id is given once');
  return v;
}

/** The caller's own stream with this id, locked for a change; 404 for any other id. */
async function ownStream(tx: Tx, c: Caller, id: string): Promise<StreamRow> {
  const s = await findStreamOfClient(tx, c.realm.id, c.clientId);
  if (!s || s.id !== id) throw problem.notFound('no such stream');
  await tx.query('select 1 from ssf_streams where realm_id = $1 and id = $2 for update', [c.realm.id, id]);
  return s;
}

const audit = (
  tx: Tx,
  c: Caller,
  type: Parameters<typeof recordAudit>[1]['type'],
  streamId: string,
  data: Record<string, unknown>,
) =>
  recordAudit(
    tx,
    {
      realmId: c.realm.id,
      type,
      category: 'configuration',
      actor: { type: 'client', id: c.clientId },
      target: { type: 'ssf_stream', id: streamId },
      correlationId: c.correlationId,
      data: { client_id: c.clientId, ...data },
    },
    c.now,
  );

export function registerSharedSignals(app: FastifyInstance, ctx: ApiDeps): void {
  app.get<{ Params: { realm: string } }>(
    '/realms/:realm/.well-known/ssf-configuration',
    async (req, reply) => {
      const realm = await enabledRealm(ctx, req.params.realm);
      const issuer = issuerOf(ctx.config.server.publicOrigin, realm.name);
      return reply.header('cache-control', 'public, max-age=300').send({
        spec_version: '1_0',
        issuer,
        jwks_uri: `${issuer}/jwks`,
        delivery_methods_supported: [PUSH_DELIVERY],
        configuration_endpoint: `${issuer}/ssf/streams`,
        status_endpoint: `${issuer}/ssf/status`,
        verification_endpoint: `${issuer}/ssf/verify`,
        // Every account of the realm is a subject of every stream; there is no subject list to edit.
        default_subjects: 'ALL',
        authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
      });
    },
  );

  app.register(async (scope) => {
    useOAuthErrors(scope, ctx);

    scope.post<{ Params: { realm: string } }>('/realms/:realm/ssf/streams', async (req, reply) => {
      const c = await authenticate(ctx, req, reply);
      const input = decodeCreate(req.body);
      const errors: FieldError[] = [];
      checkDelivery(ctx, input.delivery, errors);
      if (errors.length > 0) throw problem.validation(errors);
      const stream = await ctx.db.tx(async (tx) => {
        const s = await insertStream(
          tx,
          c.realm.id,
          {
            clientId: c.clientId,
            endpointUrl: input.delivery.endpointUrl,
            eventsRequested: input.eventsRequested,
            eventsDelivered: delivered(input.eventsRequested),
            description: input.description ?? null,
          },
          c.now,
        );
        if (!s) throw problem.conflict('this client has a stream already');
        await audit(tx, c, 'ssf.stream.created', s.id, { events_delivered: s.events_delivered });
        return s;
      });
      return reply.code(201).send(present(ctx, c.realm, stream));
    });

    scope.get<{ Params: { realm: string } }>('/realms/:realm/ssf/streams', async (req, reply) => {
      const c = await authenticate(ctx, req, reply);
      const id = queryStreamId(req);
      const s = await findStreamOfClient(ctx.db, c.realm.id, c.clientId);
      if (id === null) return reply.send(s ? [present(ctx, c.realm, s)] : []);
      if (!s || s.id !== id) throw problem.notFound('no such stream');
      return reply.send(present(ctx, c.realm, s));
    });

    scope.patch<{ Params: { realm: string } }>('/realms/:realm/ssf/streams', async (req, reply) => {
      const c = await authenticate(ctx, req, reply);
      const input = decodeUpdate(req.body);
      const errors: FieldError[] = [];
      if (input.delivery) checkDelivery(ctx, input.delivery, errors);
      if (errors.length > 0) throw problem.validation(errors);
      const stream = await ctx.db.tx(async (tx) => {
        const s = await ownStream(tx, c, input.streamId);
        const requested = input.eventsRequested ?? s.events_requested;
        const next = await updateStream(
          tx,
          c.realm.id,
          s.id,
          {
            endpointUrl: input.delivery?.endpointUrl ?? s.endpoint_url,
            eventsRequested: requested,
            eventsDelivered: delivered(requested),
            description: input.description ?? s.description,
          },
          c.now,
        );
        if (!next) throw problem.notFound('no such stream');
        await audit(tx, c, 'ssf.stream.updated', s.id, { events_delivered: next.events_delivered });
        return next;
      });
      return reply.send(present(ctx, c.realm, stream));
    });

    scope.delete<{ Params: { realm: string } }>('/realms/:realm/ssf/streams', async (req, reply) => {
      const c = await authenticate(ctx, req, reply);
      const id = queryStreamId(req);
      if (id === null) throw problem.invalidRequest('stream_id is required');
      await ctx.db.tx(async (tx) => {
        const s = await ownStream(tx, c, id);
        await deleteStream(tx, c.realm.id, s.id);
        await audit(tx, c, 'ssf.stream.deleted', s.id, {});
      });
      return reply.code(204).send();
    });

    const status = (s: StreamRow) => ({
      stream_id: s.id,
      status: s.status,
      ...(s.status_reason === null ? {} : { reason: s.status_reason }),
    });

    scope.get<{ Params: { realm: string } }>('/realms/:realm/ssf/status', async (req, reply) => {
      const c = await authenticate(ctx, req, reply);
      const id = queryStreamId(req);
      const s = await findStreamOfClient(ctx.db, c.realm.id, c.clientId);
      if (!s || (id !== null && s.id !== id)) throw problem.notFound('no such stream');
      return reply.send(status(s));
    });

    scope.post<{ Params: { realm: string } }>('/realms/:realm/ssf/status', async (req, reply) => {
      const c = await authenticate(ctx, req, reply);
      const input = decodeStatus(req.body);
      const next = await ctx.db.tx(async (tx) => {
        const s = await ownStream(tx, c, input.streamId);
        const changed = await setStreamStatus(
          tx,
          c.realm.id,
          s.id,
          input.status,
          input.reason ?? null,
          c.now,
        );
        if (!changed) throw problem.notFound('no such stream');
        if (s.status !== input.status)
          await audit(tx, c, 'ssf.stream.status_changed', s.id, { from: s.status, status: input.status });
        return changed;
      });
      return reply.send(status(next));
    });

    scope.post<{ Params: { realm: string } }>('/realms/:realm/ssf/verify', async (req, reply) => {
      const c = await authenticate(ctx, req, reply);
      const input = decodeVerify(req.body);
      await ctx.db.tx(async (tx) => {
        const s = await ownStream(tx, c, input.streamId);
        if (s.status === 'disabled') throw problem.conflict('the stream is disabled');
        await queueVerification(
          tx,
          c.realm.id,
          s.id,
          input.state === undefined ? {} : { state: input.state },
          c.now,
        );
      });
      return reply.code(204).send();
    });
  });
}
