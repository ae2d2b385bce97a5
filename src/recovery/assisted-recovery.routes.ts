// The assisted recovery endpoints (document 1 "Recovery and account administration" and the /me
// rows; docs/recovery.md):
//   POST /users/{user}/recovery-requests            support.recovery.assist (+ credentials.manage for reset_mfa)
//   POST /assisted-recoveries/{id}/approve          the same; an operator other than requester and owner
//   GET  /me/assisted-recoveries                    the owner's view
//   POST /me/assisted-recoveries/{id}/cancel        the owner's cancel
//   POST /recovery-setup {token, password}          the mailed setup link, no bearer (the token is the proof)
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { userIdParam } from '../users/users.decode.ts';
import { decodeRecoveryRequest, decodeRecoverySetup, recoveryIdParam } from './assisted-recovery.decode.ts';
import {
  ASSIST_PERMISSION,
  approveRecovery,
  CREDENTIALS_PERMISSION,
  completeRecoverySetup,
  ownerCancelRecovery,
  ownerRecoveries,
  presentRecovery,
  requestRecovery,
} from './assisted-recovery.service.ts';

/** Requests an owner sees at most (newest first). */
const OWNER_VIEW_LIMIT = 50;

export function registerAssistedRecoveryRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const assist = { audience: 'admin', permissions: [ASSIST_PERMISSION] } as const;
  // Read per request: the public origin is settled once the listener is (tests bind port 0).
  const deps = () => ({ db: ctx.db, keyring: ctx.keyring, publicOrigin: ctx.config.server.publicOrigin });

  apiRoute<{ user: string }>(
    app,
    ctx,
    'POST',
    '/users/:user/recovery-requests',
    assist,
    async ({ req, reply, caller, call }) => {
      const userId = userIdParam(req.params.user);
      const input = decodeRecoveryRequest(req.body);
      if (input.resetMfa && !caller.permissions.has(CREDENTIALS_PERMISSION))
        throw problem.forbidden(`reset_mfa needs the permission ${CREDENTIALS_PERMISSION}`);
      const r = await requestRecovery(deps(), call, userId, input);
      const body = {
        recovery_id: r.row.id,
        effective_at: r.row.effective_at.toISOString(),
        approval_required: r.row.approval_required,
      };
      reply.header('cache-control', 'no-store');
      if (r.scheduled) return reply.code(202).send({ status: 'recovery_scheduled', ...body });
      return reply.code(200).send({ status: 'executed', ...body });
    },
  );

  apiRoute<{ id: string }>(
    app,
    ctx,
    'POST',
    '/assisted-recoveries/:id/approve',
    assist,
    async ({ req, caller, call }) => {
      const id = recoveryIdParam(req.params.id);
      decodeNoBody(req.body);
      return presentRecovery(await approveRecovery(ctx.db, call, id, caller.permissions));
    },
  );

  const account = { audience: 'account' } as const;
  apiRoute(app, ctx, 'GET', '/me/assisted-recoveries', account, async ({ caller, call }) => {
    if (caller.kind !== 'user') throw problem.forbidden('only a user has an account');
    const rows = await ownerRecoveries(ctx.db, call.realmId, caller.id, OWNER_VIEW_LIMIT);
    return { items: rows.map(presentRecovery) };
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'POST',
    '/me/assisted-recoveries/:id/cancel',
    account,
    async ({ req, caller, call }) => {
      if (caller.kind !== 'user') throw problem.forbidden('only a user has an account');
      const id = recoveryIdParam(req.params.id);
      decodeNoBody(req.body);
      return presentRecovery(await ownerCancelRecovery(ctx.db, call, caller.id, id));
    },
  );

  app.post<{ Params: { realm: string } }>('/api/v1/realms/:realm/recovery-setup', async (req, reply) => {
    const realm = await findRequestedRealm(ctx, req.params.realm);
    if (!realm) throw problem.notFound('no such realm');
    const input = decodeRecoverySetup(req.body);
    await completeRecoverySetup(ctx, realm.id, input.token, input.password, ctx.clock.now(), String(req.id));
    return reply.header('cache-control', 'no-store').code(204).send();
  });
}
