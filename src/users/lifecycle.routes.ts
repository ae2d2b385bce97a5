// Lifecycle and identifier administration under /api/v1/realms/{realm} (document 1 "Recovery and
// account administration"): scheduled deactivation, the lifecycle preview, and adding, verifying
// and making primary an account's identifiers. Routes decode and authorize; lifecycle.admin.ts and
// identifiers.admin.ts own the transactions.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { addIdentifier, makePrimary, overrideVerification } from './identifiers.admin.ts';
import { cancelDeactivation, previewLifecycle, scheduleDeactivation } from './lifecycle.admin.ts';
import {
  decodeAddIdentifier,
  decodeReason,
  decodeScheduledDeactivation,
  decodeVerificationOverride,
  identifierIdParam,
  userIdParam,
} from './users.decode.ts';
import { presentIdentifier } from './users.routes.ts';

type UserParams = { user: string };

export function registerLifecycleRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.users.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.users.write'] } as const;
  const suspend = { audience: 'admin', permissions: ['realm.users.suspend'] } as const;
  const override = { audience: 'admin', permissions: ['realm.users.verification.override'] } as const;

  apiRoute<UserParams>(
    app,
    ctx,
    'PUT',
    '/users/:user/scheduled-deactivation',
    suspend,
    async ({ req, call }) => {
      const input = decodeScheduledDeactivation(req.body, call.now);
      const userId = userIdParam(req.params.user);
      const s = await scheduleDeactivation(ctx.db, call, userId, input);
      return { user_id: s.userId, at: s.at.toISOString(), reason: s.reason };
    },
  );

  apiRoute<UserParams>(
    app,
    ctx,
    'DELETE',
    '/users/:user/scheduled-deactivation',
    suspend,
    async ({ req, reply, call }) => {
      await cancelDeactivation(ctx.db, call, userIdParam(req.params.user));
      return reply.code(204).send();
    },
  );

  apiRoute(app, ctx, 'GET', '/lifecycle/preview', read, async ({ call }) => {
    const preview = await previewLifecycle(ctx.db, call);
    return {
      dry_run: true,
      batch_size: preview.batchSize,
      rules: preview.rules.map((r) => ({
        name: r.name,
        action: r.action,
        due: r.due,
        sample_user_ids: r.sampleUserIds,
      })),
    };
  });

  apiRoute<UserParams>(app, ctx, 'POST', '/users/:user/identifiers', write, async ({ req, reply, call }) => {
    const input = decodeAddIdentifier(req.body);
    const added = await addIdentifier(ctx.db, call, userIdParam(req.params.user), input);
    return reply.code(201).send(presentIdentifier(added));
  });

  apiRoute<UserParams>(
    app,
    ctx,
    'POST',
    '/users/:user/verification-overrides',
    override,
    async ({ req, call }) => {
      const input = decodeVerificationOverride(req.body);
      return presentIdentifier(await overrideVerification(ctx.db, call, userIdParam(req.params.user), input));
    },
  );

  apiRoute<UserParams & { id: string }>(
    app,
    ctx,
    'POST',
    '/users/:user/identifiers/:id/primary',
    write,
    async ({ req, call }) => {
      const reason = decodeReason(req.body);
      const userId = userIdParam(req.params.user);
      const made = await makePrimary(ctx.db, call, userId, identifierIdParam(req.params.id), reason);
      return presentIdentifier(made);
    },
  );
}
