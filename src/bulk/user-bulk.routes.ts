// POST /api/v1/realms/{realm}/user-bulk-actions (docs/user-bulk.md): one action for up to 1,000
// accounts as a user.bulk job. The caller must hold the action's permission now (403 otherwise);
// the worker checks it again. 202 {job_id}; an Idempotency-Key answers the same job.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { recorder } from '../audit/index.ts';
import { idempotencyKeyOf, queueJob } from '../jobs/index.ts';
import { decodeBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { callerAuthority, REALM_CONTEXT } from '../roles/delegation.ts';
import { bulkPermission, bulkRequestProblems, decodeBulkRequest } from './user-bulk.format.ts';
import { userBulkJob } from './user-bulk.job.ts';

// Any administrator may ask; what the action needs is checked once the action is known.
const ADMIN = { audience: 'admin', permissions: [] } as const;

export function registerUserBulkRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'POST', '/user-bulk-actions', ADMIN, async ({ req, reply, caller, call }) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const r = decodeBody(decodeBulkRequest, body);
    const errors = bulkRequestProblems(r);
    if (errors.length > 0) throw problem.validation(errors);
    const need = bulkPermission(r);
    const held = await callerAuthority(
      ctx.db,
      call.realmId,
      caller,
      need.organizationId ? { orgId: need.organizationId, projectId: null } : REALM_CONTEXT,
      call.now,
    );
    if (!held.everything && !held.permissions.has(need.permission))
      throw problem.forbidden(`this action needs the permission ${need.permission}`);
    const idempotencyKey = idempotencyKeyOf(req.headers);
    const queued = await ctx.db.tx(async (tx) => {
      const job = await queueJob(tx, userBulkJob, {
        realmId: call.realmId,
        requester: call.actor,
        now: call.now,
        idempotencyKey,
        params: body,
      });
      if (!job.replayed)
        await recorder(tx, call).audit('user.bulk.requested', {
          category: 'identity',
          reason: r.reason ?? null,
          data: { job_id: job.id, action: r.action, users: r.userIds.length },
        });
      return job;
    });
    return reply.code(202).send({ job_id: queued.id });
  });
}
