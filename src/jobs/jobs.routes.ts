// The jobs API under /api/v1/realms/{realm} (spec doc 2, Jobs and exports; docs/jobs.md): poll a
// job, get a download token for its result, redeem the token for the file.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody, object, string } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { idParam } from '../roles/roles.decode.ts';
import { issueDownloadToken, redeemDownloadToken } from './job-downloads.ts';
import { presentJob } from './jobs.present.ts';
import { findJob } from './jobs.repo.ts';

const decodeRedeem = object({ download_token: string({ minLength: 1, maxLength: 200 }) });

// What an account token reaches: the personal data export, its only job type.
const ACCOUNT_TYPES: readonly string[] = ['user.export'];

/**
 * The jobs API. Administration tokens reach every job type; account tokens (a user's own token,
 * both here and under /me) reach the personal data export only, so other jobs are not found.
 */
function registerJobFamily(
  app: FastifyInstance,
  ctx: ApiDeps,
  family: { prefix: '' | '/me'; audience: 'admin' | 'account' },
): void {
  const auth = { audience: family.audience, accountTokensToo: true } as const;
  const typesFor = (caller: ApiCaller) => (caller.audience === 'admin' ? null : ACCOUNT_TYPES);
  const inFamily = (caller: ApiCaller, type: string) => {
    const types = typesFor(caller);
    return types === null || types.includes(type);
  };

  // The requester sees its own job; holders of realm.jobs.read see every job of the realm.
  apiRoute<{ id: string }>(
    app,
    ctx,
    'GET',
    `${family.prefix}/jobs/:id`,
    auth,
    async ({ req, caller, call }) => {
      const id = idParam('job', req.params.id, 'job');
      const job = await findJob(ctx.db, call.realmId, id);
      const own = job && job.requested_by_type === caller.kind && job.requested_by_id === caller.id;
      if (!job || !inFamily(caller, job.type) || (!own && !caller.permissions.has('realm.jobs.read')))
        throw problem.notFound('no such job');
      return presentJob(job);
    },
  );

  apiRoute<{ id: string }>(
    app,
    ctx,
    'POST',
    `${family.prefix}/jobs/:id/downloads`,
    auth,
    async ({ req, reply, caller, call }) => {
      decodeNoBody(req.body);
      const id = idParam('job', req.params.id, 'job');
      const job = await findJob(ctx.db, call.realmId, id);
      if (job && !inFamily(caller, job.type)) throw problem.notFound('no such job');
      const issued = await issueDownloadToken(ctx.db, { call, permissions: caller.permissions }, id);
      return reply.code(201).header('cache-control', 'no-store').send(issued);
    },
  );

  apiRoute(app, ctx, 'POST', `${family.prefix}/job-downloads`, auth, async ({ req, reply, caller, call }) => {
    const { downloadToken } = decodeRedeem(req.body);
    if (!ctx.keyring) throw problem.conflict('no root key is configured, so no result can be opened');
    const file = await redeemDownloadToken(
      ctx.db,
      ctx.keyring,
      { call, permissions: caller.permissions, types: typesFor(caller) },
      downloadToken,
    );
    return reply
      .code(200)
      .header('content-type', file.contentType)
      .header('content-disposition', `attachment; filename="${file.filename}"`)
      .header('cache-control', 'no-store')
      .send(file.body);
  });
}

export function registerJobRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  registerJobFamily(app, ctx, { prefix: '', audience: 'admin' });
  registerJobFamily(app, ctx, { prefix: '/me', audience: 'account' });
}
