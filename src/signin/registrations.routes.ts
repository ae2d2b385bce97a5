// Registration outside the transaction path (spec doc 1: POST /api/v1/realms/{realm}/registrations
// with transaction_id; headless, with the transaction's X-Transaction-Token) and the administrator's
// queue of registrations held for approval.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { runStep } from './advance.ts';
import { decidePendingRegistration, pendingRegistrations } from './registrations.service.ts';
import { credentialsOf } from './signin.routes.ts';
import { registrationStep } from './steps/registration.ts';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function registerRegistrationRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  app.post<{ Params: { realm: string } }>('/api/v1/realms/:realm/registrations', async (req, reply) => {
    const body = req.body ?? {};
    if (!isObject(body)) throw problem.invalidRequest('the body must be a JSON object');
    const { transaction_id: txId, ...rest } = body;
    if (typeof txId !== 'string' || txId === '')
      throw problem.validation([{ field: 'transaction_id', code: 'required' }]);
    const r = await runStep(
      ctx,
      req.params.realm,
      txId,
      credentialsOf(req),
      registrationStep,
      rest,
      String(req.id),
    );
    return reply.header('cache-control', 'no-store').send(r.body);
  });

  const read = { audience: 'admin', permissions: ['realm.users.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.users.write'] } as const;
  apiRoute(app, ctx, 'GET', '/registrations', read, async ({ call }) => {
    const items = await pendingRegistrations(ctx.db, call.realmId, ctx.config.limits.maxPageSize);
    return {
      items: items.map((p) => ({
        user_id: p.user_id,
        display_name: p.display_name,
        email: p.email,
        state: 'pending',
        created_at: new Date(p.created_at).toISOString(),
      })),
    };
  });
  for (const [path, decision] of [
    ['approve', 'approved'],
    ['deny', 'denied'],
  ] as const) {
    apiRoute<{ user: string }>(
      app,
      ctx,
      'POST',
      `/registrations/:user/${path}`,
      write,
      async ({ req, call }) => {
        decodeNoBody(req.body);
        return decidePendingRegistration(ctx.db, call, req.params.user, decision);
      },
    );
  }
}
