// HTTP edge of synchronous hooks (docs/hooks.md): list, create, read, change, delete and rotate
// the signing secret, under realm.hooks.read and realm.hooks.write, shaped as the webhook
// endpoints are (document 2, Webhooks endpoints).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { cursorBinding, makeCursor, openCursor, pageLimit, queryParams } from '../platform/http/keyset.ts';
import { etagOf } from '../roles/index.ts';
import { decodeCreateHook, decodePatchHook } from './hooks.decode.ts';
import type { HookRow } from './hooks.repo.ts';
import {
  createHook,
  getHook,
  type HookAdminDeps,
  listHookPage,
  patchHook,
  removeHook,
  rotateHookSecretOf,
} from './hooks.service.ts';

const READ = { audience: 'admin', permissions: ['realm.hooks.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.hooks.write'] } as const;
const HOOK_ID = /^hok_[0-9a-z]{26}$/;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** The fields of the realm export's hook line, and when it last changed; never the secret. */
export const presentHook = (h: HookRow) => ({
  id: h.id,
  name: h.name,
  kind: h.kind,
  url: h.url,
  timeout_ms: h.timeout_ms,
  failure_mode: h.failure_mode,
  client_ids: h.client_ids,
  allow_private_network: h.allow_private_network,
  state: h.state,
  owner_user_id: h.owner_user_id,
  ...(h.plugin_id ? { plugin_id: h.plugin_id } : {}),
  created_at: iso(h.created_at),
  updated_at: iso(h.updated_at),
});

const ifMatch = (req: FastifyRequest): string | undefined => {
  const v = req.headers['if-match'];
  return Array.isArray(v) ? v.join(', ') : v;
};

type HookParams = { hook: string };

export function registerHookRoutes(app: FastifyInstance, ctx: ApiDeps & { hookAdmin: HookAdminDeps }): void {
  const deps = ctx.hookAdmin;

  apiRoute(app, ctx, 'POST', '/hooks', WRITE, async ({ req, reply, realm, call }) => {
    const { row, secret } = await createHook(deps, call, decodeCreateHook(req.body));
    return reply
      .code(201)
      .header('etag', etagOf(row.version))
      .header('location', `/api/v1/realms/${realm.name}/hooks/${row.id}`)
      .header('cache-control', 'no-store')
      .send({ ...presentHook(row), signing_secret: secret });
  });

  apiRoute(app, ctx, 'GET', '/hooks', READ, async ({ req, realm }) => {
    const param = queryParams(req.query, []);
    const limit = pageLimit(param('limit'), ctx.config.limits);
    const binding = cursorBinding([realm.id, 'hooks']);
    const after = openCursor(param('cursor'), binding, (id) => HOOK_ID.test(id));
    const page = await listHookPage(deps, { realmId: realm.id, after, limit });
    return {
      items: page.items.map(presentHook),
      next_cursor: page.nextAfter === null ? null : makeCursor(page.nextAfter, binding),
    };
  });

  apiRoute<HookParams>(app, ctx, 'GET', '/hooks/:hook', READ, async ({ req, reply, realm }) => {
    const row = await getHook(deps, realm.id, req.params.hook);
    return reply.header('etag', etagOf(row.version)).send(presentHook(row));
  });

  apiRoute<HookParams>(app, ctx, 'PATCH', '/hooks/:hook', WRITE, async ({ req, reply, call }) => {
    const row = await patchHook(deps, call, req.params.hook, decodePatchHook(req.body), ifMatch(req));
    return reply.header('etag', etagOf(row.version)).send(presentHook(row));
  });

  apiRoute<HookParams>(app, ctx, 'DELETE', '/hooks/:hook', WRITE, async ({ req, reply, call }) => {
    await removeHook(deps, call, req.params.hook, ifMatch(req));
    return reply.code(204).send();
  });

  apiRoute<HookParams>(
    app,
    ctx,
    'POST',
    '/hooks/:hook/rotate-secret',
    WRITE,
    async ({ req, reply, call }) => {
      decodeNoBody(req.body);
      const { row, secret } = await rotateHookSecretOf(deps, call, req.params.hook);
      return reply
        .header('etag', etagOf(row.version))
        .header('cache-control', 'no-store')
        .send({
          ...presentHook(row),
          signing_secret: secret,
          previous_secret_expires_at: iso(row.previous_secret_expires_at),
        });
    },
  );
}
