// HTTP edge of configuration as code (spec doc 1, Endpoints: Configuration;
// docs/configuration-as-code.md): POST /configuration/validate answers the plan with 200 even when
// it lists errors; POST /configuration/imports applies it (or only plans it with ?dry_run=true);
// POST /configuration/exports queues the config.export job.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { idempotencyKeyOf, queueJob } from '../jobs/index.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { configExportJob } from './config-export.job.ts';
import { importConfiguration, planConfiguration } from './config-import.ts';
import type { ImportMode } from './config-plan.ts';

const VALIDATE = { audience: 'admin', permissions: ['realm.configuration.import'] } as const;
const IMPORT = { ...VALIDATE, recentAuth: true } as const;
const EXPORT = { audience: 'admin', permissions: ['realm.configuration.export'] } as const;

function queryOf(req: FastifyRequest): { mode: ImportMode; dryRun: boolean } {
  const q = (req.query ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(q))
    if (k !== 'mode' && k !== 'dry_run')
      throw problem.invalidRequest(`unknown query parameter ${k.slice(0, 64)}`);
  const mode = q.mode ?? 'create';
  if (mode !== 'create' && mode !== 'reconcile') throw problem.invalidRequest('mode is create or reconcile');
  const dry = q.dry_run ?? 'false';
  if (dry !== 'true' && dry !== 'false') throw problem.invalidRequest('dry_run is true or false');
  return { mode, dryRun: dry === 'true' };
}

export function registerConfigurationRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'POST', '/configuration/validate', VALIDATE, async ({ req, realm, caller, call }) => {
    const { mode } = queryOf(req);
    const plan = await planConfiguration(ctx, { realm, call, caller, body: req.body, mode });
    return plan.body;
  });

  apiRoute(app, ctx, 'POST', '/configuration/imports', IMPORT, async ({ req, realm, caller, call }) => {
    const { mode, dryRun } = queryOf(req);
    const r = await importConfiguration(ctx, { realm, call, caller, body: req.body, mode }, { dryRun });
    return { ...r.plan, dry_run: dryRun, applied: r.applied };
  });

  // The export is a job (spec doc 2, Jobs and exports): 202 with its id, the same job again for a
  // repeated Idempotency-Key; the file is fetched through GET /jobs/{id} and a download token.
  apiRoute(app, ctx, 'POST', '/configuration/exports', EXPORT, async ({ req, reply, call }) => {
    decodeNoBody(req.body);
    const job = await ctx.db.tx((tx) =>
      queueJob(tx, configExportJob, {
        realmId: call.realmId,
        requester: call.actor,
        now: call.now,
        idempotencyKey: idempotencyKeyOf(req.headers),
      }),
    );
    return reply.code(202).send({ job_id: job.id });
  });
}
