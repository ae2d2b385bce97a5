// HTTP edge of API keys (docs/api-keys.md): list, issue (the key is in the 201 answer only),
// revoke.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { problem } from '../platform/http/problem.ts';
import { adminChange, iso } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import { decodeCreateApiKey } from './api-keys.decode.ts';
import { type ApiKeyRow, listApiKeys } from './api-keys.repo.ts';
import { type ApiKeyState, apiKeyState, createApiKey, revokeApiKey } from './api-keys.service.ts';

const STATES: readonly string[] = ['active', 'revoked', 'expired'];

const presentApiKey = (k: ApiKeyRow, now: Date) => ({
  id: k.id,
  service_principal_id: k.service_principal_id,
  name: k.name,
  state: apiKeyState(k, now),
  created_at: iso(k.created_at),
  expires_at: iso(k.expires_at),
  revoked_at: iso(k.revoked_at),
});

export function registerApiKeyRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.service_principals.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.service_principals.write'] } as const;

  apiRoute(app, ctx, 'GET', '/api-keys', read, async ({ req, realm, call }) => {
    const q = decodePageQuery(req.query, ctx.config.limits, `${realm.id}:GET /api-keys`, [
      'service_principal_id',
      'state',
    ] as const);
    const state = q.filters.state;
    if (state !== undefined && !STATES.includes(state))
      throw problem.invalidRequest('state must be active, revoked or expired');
    const rows = await listApiKeys(
      ctx.db,
      realm.id,
      {
        ...(q.filters.service_principal_id ? { principalId: q.filters.service_principal_id } : {}),
        ...(state ? { state: state as ApiKeyState } : {}),
      },
      call.now,
      q,
    );
    return pageOf(rows, q, (k) => presentApiKey(k, call.now));
  });

  apiRoute(app, ctx, 'POST', '/api-keys', write, async ({ req, reply, caller, call }) => {
    const input = decodeCreateApiKey(req.body);
    const { row, key } = await createApiKey(ctx.db, adminChange(call, caller), input);
    return reply
      .code(201)
      .header('cache-control', 'no-store')
      .send({ ...presentApiKey(row, call.now), key });
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/api-keys/:id',
    write,
    async ({ req, reply, caller, call }) => {
      await revokeApiKey(ctx.db, adminChange(call, caller), idParam('apk', req.params.id, 'API key'));
      return reply.code(204).send();
    },
  );
}
