// Self-service account deletion under /me (account-audience token, recent authentication):
// POST /api/v1/realms/{realm}/me/deletion {} answers 202 {state: pending_deletion, deletion_due_at}.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { requestOwnDeletion } from './self-deletion.ts';

export function registerMeAccountRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const account = { audience: 'account', recentAuth: true } as const;
  apiRoute(app, ctx, 'POST', '/me/deletion', account, async ({ req, reply, caller, call }) => {
    if (caller.kind !== 'user') throw problem.forbidden('only a user has an account to delete');
    decodeNoBody(req.body);
    const r = await requestOwnDeletion(ctx.db, call, caller.id, ctx.config.privacy.deletionGraceMs);
    reply.code(202);
    return r;
  });
}
