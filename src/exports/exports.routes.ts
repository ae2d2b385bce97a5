// The export requests (spec doc 2, Jobs and exports; docs/jobs.md): each queues a job and answers
// 202 {job_id}; an Idempotency-Key header answers the same job on a retry. Results are fetched
// through the jobs API (GET /jobs/{id}, POST /jobs/{id}/downloads, POST /job-downloads; the
// personal export under /me).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { RequestCall } from '../api/api-route.ts';
import { apiRoute } from '../api/api-route.ts';
import { idempotencyKeyOf, type JobType, queueJob } from '../jobs/index.ts';
import { findOrganization } from '../organizations/index.ts';
import { decodeBody, decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { auditExportJob } from './audit-export.job.ts';
import { decodeAuditExport } from './exports.decode.ts';
import { realmExportJob } from './realm-export.job.ts';
import { userExportJob } from './user-export.job.ts';

const DATA_EXPORT = { audience: 'admin', permissions: ['realm.data.export'], recentAuth: true } as const;
const AUDIT_EXPORT = { audience: 'admin', permissions: ['realm.audit.export'], recentAuth: true } as const;
const PERSONAL_EXPORT = { audience: 'account', recentAuth: true } as const;

async function queue<D>(
  ctx: ApiDeps,
  call: RequestCall,
  headers: Record<string, string | string[] | undefined>,
  type: JobType<D>,
  extra: { organizationId?: string | null; params?: Record<string, unknown> } = {},
): Promise<{ job_id: string }> {
  const idempotencyKey = idempotencyKeyOf(headers);
  const job = await ctx.db.tx((tx) =>
    queueJob(tx, type, {
      realmId: call.realmId,
      requester: call.actor,
      now: call.now,
      idempotencyKey,
      ...extra,
    }),
  );
  return { job_id: job.id };
}

export function registerExportRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  // The request has no body; an empty object is accepted as none.
  apiRoute(app, ctx, 'POST', '/data-exports', DATA_EXPORT, async ({ req, reply, call }) => {
    decodeNoBody(req.body);
    return reply.code(202).send(await queue(ctx, call, req.headers, realmExportJob));
  });

  apiRoute(app, ctx, 'POST', '/audit-exports', AUDIT_EXPORT, async ({ req, reply, call }) => {
    const body = decodeBody(decodeAuditExport, req.body);
    const orgId = body.organizationId ?? null;
    if (orgId !== null && !(await findOrganization(ctx.db, call.realmId, orgId)))
      throw problem.notFound('no such organization');
    const params = { organization_id: orgId, from: body.from.toISOString(), to: body.to.toISOString() };
    // Named organization: the job counts toward that organization's share of the workers.
    return reply
      .code(202)
      .send(await queue(ctx, call, req.headers, auditExportJob, { organizationId: orgId, params }));
  });

  apiRoute(app, ctx, 'POST', '/me/exports', PERSONAL_EXPORT, async ({ req, reply, caller, call }) => {
    if (caller.kind !== 'user') throw problem.forbidden('only a user has personal data to export');
    decodeNoBody(req.body);
    return reply.code(202).send(await queue(ctx, call, req.headers, userExportJob));
  });
}
