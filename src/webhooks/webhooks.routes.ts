// HTTP edge of webhook subscriptions (spec doc 2, Webhooks endpoints; Versioning 2). Decoding and
// presenting live here; the rules live in subscriptions.service.ts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { cursorBinding, makeCursor, openCursor, pageLimit, queryParams } from '../platform/http/keyset.ts';
import type { DeliveryRow } from './deliveries.repo.ts';
import type { SubscriptionRow } from './subscriptions.repo.ts';
import {
  backlog,
  createSubscription,
  getSubscription,
  listDeliveryPage,
  listSubscriptionPage,
  patchSubscription,
  removeSubscription,
  replayDelivery,
  rotateSecret,
  subscriptionEtag,
  type WebhookDeps,
} from './subscriptions.service.ts';
import { EXTENSION_CONTRACTS } from './webhook-envelope.ts';
import { decodeCreate, decodePatch } from './webhooks.decode.ts';

const READ = { audience: 'admin', permissions: ['realm.webhooks.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.webhooks.write'] } as const;

const SUBSCRIPTION_ID = /^whk_[0-9a-z]{26}$/;
const DELIVERY_ID = /^whd_[0-9a-z]{26}$/;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const presentSubscription = (s: SubscriptionRow) => ({
  id: s.id,
  name: s.name,
  destination_url: s.destination_url,
  event_types: s.event_types,
  organization_id: s.organization_id,
  payload_form: s.payload_form,
  event_version: s.event_version,
  allow_private_network: s.allow_private_network,
  state: s.state,
  ...(s.plugin_id ? { plugin_id: s.plugin_id } : {}),
  owner_user_id: s.owner_user_id,
  created_at: iso(s.created_at),
  updated_at: iso(s.updated_at),
});

export const presentDelivery = (d: DeliveryRow) => ({
  id: d.id,
  event_id: d.event_id,
  event_type: d.event_type,
  event_version: d.event_version,
  state: d.state,
  attempts: d.attempts,
  last_status: d.last_status,
  response_category: d.last_category,
  last_attempt_at: iso(d.last_attempt_at),
  next_attempt_at: d.state === 'pending' || d.state === 'retrying' ? iso(d.next_attempt_at) : null,
  delivered_at: iso(d.delivered_at),
  created_at: iso(d.created_at),
});

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

type SubParams = { webhook: string };
type DeliveryParams = { webhook: string; delivery: string };

export function registerWebhookRoutes(app: FastifyInstance, ctx: ApiDeps & { webhooks: WebhookDeps }): void {
  const deps = ctx.webhooks;
  const pages = ctx.config.limits;

  apiRoute(app, ctx, 'POST', '/webhooks', WRITE, async ({ req, reply, realm, call }) => {
    const input = decodeCreate(req.body);
    const { row, secret } = await createSubscription(deps, call, input);
    return reply
      .code(201)
      .header('etag', subscriptionEtag(row.version))
      .header('location', `/api/v1/realms/${realm.name}/webhooks/${row.id}`)
      .header('cache-control', 'no-store')
      .send({ ...presentSubscription(row), signing_secret: secret });
  });

  apiRoute(app, ctx, 'GET', '/webhooks', READ, async ({ req, realm }) => {
    const param = queryParams(req.query, []);
    const limit = pageLimit(param('limit'), pages);
    const binding = cursorBinding([realm.id, 'webhooks']);
    const after = openCursor(param('cursor'), binding, (id) => SUBSCRIPTION_ID.test(id));
    const page = await listSubscriptionPage(deps, realm.id, after, limit);
    return {
      items: page.items.map(presentSubscription),
      next_cursor: page.nextAfter === null ? null : makeCursor(page.nextAfter, binding),
    };
  });

  apiRoute<SubParams>(app, ctx, 'GET', '/webhooks/:webhook', READ, async ({ req, reply, realm }) => {
    const row = await getSubscription(deps, realm.id, req.params.webhook);
    return reply.header('etag', subscriptionEtag(row.version)).send(presentSubscription(row));
  });

  apiRoute<SubParams>(app, ctx, 'PATCH', '/webhooks/:webhook', WRITE, async ({ req, reply, call }) => {
    const patch = decodePatch(req.body);
    const row = await patchSubscription(deps, call, req.params.webhook, patch, header(req, 'if-match'));
    return reply.header('etag', subscriptionEtag(row.version)).send(presentSubscription(row));
  });

  apiRoute<SubParams>(app, ctx, 'DELETE', '/webhooks/:webhook', WRITE, async ({ req, reply, call }) => {
    await removeSubscription(deps, call, req.params.webhook, header(req, 'if-match'));
    return reply.code(204).send();
  });

  apiRoute<SubParams>(
    app,
    ctx,
    'POST',
    '/webhooks/:webhook/rotate-secret',
    WRITE,
    async ({ req, reply, call }) => {
      decodeNoBody(req.body);
      const { row, secret } = await rotateSecret(deps, call, req.params.webhook);
      return reply
        .header('etag', subscriptionEtag(row.version))
        .header('cache-control', 'no-store')
        .send({
          ...presentSubscription(row),
          signing_secret: secret,
          previous_secret_expires_at: iso(row.previous_secret_expires_at),
        });
    },
  );

  apiRoute<SubParams>(app, ctx, 'GET', '/webhooks/:webhook/deliveries', READ, async ({ req, realm }) => {
    const param = queryParams(req.query, []);
    const limit = pageLimit(param('limit'), pages);
    const binding = cursorBinding([realm.id, 'webhook-deliveries', req.params.webhook]);
    const before = openCursor(param('cursor'), binding, (id) => DELIVERY_ID.test(id));
    const page = await listDeliveryPage(deps, realm.id, req.params.webhook, before, limit);
    return {
      items: page.items.map(presentDelivery),
      next_cursor: page.nextAfter === null ? null : makeCursor(page.nextAfter, binding),
    };
  });

  apiRoute<DeliveryParams>(
    app,
    ctx,
    'POST',
    '/webhooks/:webhook/deliveries/:delivery/replay',
    WRITE,
    async ({ req, reply, call }) => {
      decodeNoBody(req.body);
      const row = await replayDelivery(deps, call, req.params.webhook, req.params.delivery);
      return reply.code(202).send(presentDelivery(row));
    },
  );

  apiRoute<SubParams>(app, ctx, 'GET', '/webhooks/:webhook/backlog', READ, async ({ req, realm }) =>
    backlog(deps, realm.id, req.params.webhook, ctx.clock.now()),
  );

  apiRoute(app, ctx, 'GET', '/extension-contracts', READ, async () => EXTENSION_CONTRACTS);
}
