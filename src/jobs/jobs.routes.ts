// The jobs API under /api/v1/realms/{realm} (spec doc 2, Jobs and exports; docs/jobs.md): poll a
// job, get a download token for its result, redeem the token for the file.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { object, string } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { idParam } from '../roles/roles.decode.ts';
import { issueDownloadToken, redeemDownloadToken } from './job-downloads.ts';
import { presentJob } from './jobs.present.ts';
import { findJob } from './jobs.repo.ts';

const decodeRedeem = object({ download_token: string({ minLength: 1, maxLength: 200 }) });

export function registerJobRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  // The requester sees its own job; holders of realm.jobs.read see every job of the realm.
  apiRoute<{ id: string }>(
    app,
    ctx,
    'GET',
    '/jobs/:id',
    { audience: 'admin' },
    async ({ req, caller, call }) => {
      const id = idParam('job', req.params.id, 'job');
      const job = await findJob(ctx.db, call.realmId, id);
      const own = job && job.requested_by_type === caller.kind && job.requested_by_id === caller.id;
      if (!job || (!own && !caller.permissions.has('realm.jobs.read'))) throw problem.notFound('no such job');
      return presentJob(job);
    },
  );

  apiRoute<{ id: string }>(
    app,
    ctx,
    'POST',
    '/jobs/:id/downloads',
    { audience: 'admin' },
    async ({ req, reply, caller, call }) => {
      const id = idParam('job', req.params.id, 'job');
      const issued = await issueDownloadToken(ctx.db, { call, permissions: caller.permissions }, id);
      return reply.code(201).header('cache-control', 'no-store').send(issued);
    },
  );

  apiRoute(
    app,
    ctx,
    'POST',
    '/job-downloads',
    { audience: 'admin' },
    async ({ req, reply, caller, call }) => {
      const { downloadToken } = decodeRedeem(req.body);
      if (!ctx.keyring) throw problem.conflict('no root key is configured, so no result can be opened');
      const file = await redeemDownloadToken(
        ctx.db,
        ctx.keyring,
        { call, permissions: caller.permissions },
        downloadToken,
      );
      return reply
        .code(200)
        .header('content-type', file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .header('cache-control', 'no-store')
        .send(file.body);
    },
  );
}
