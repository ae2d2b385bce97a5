// The worker process body: the scheduler over TASKS, its metrics, and the optional internal
// listener (spec doc 2: served only when workers.metrics_listen is set).
import { Counter } from 'prom-client';
import { parseListen } from '../../platform/config/load.ts';
import { type AppContext, requireKeyring } from '../context.ts';
import { buildInternalApp } from '../http-server.ts';
import { Scheduler, WORKER_ID } from './scheduler.ts';
import { TASKS, type WorkerDeps } from './tasks.ts';

export interface RunningWorker {
  scheduler: Scheduler<WorkerDeps>;
  /** Starts the internal listener when configured; returns its URL. */
  listenInternal(): Promise<string | null>;
  stop(): Promise<void>;
}

export function workerDeps(ctx: AppContext): WorkerDeps {
  return {
    db: ctx.db,
    keyring: requireKeyring(ctx),
    signingAlgorithm: ctx.config.keys.signingAlgorithm,
    timings: { ...ctx.config.keys, maxAccessTokenTtlMs: ctx.config.tokens.maxAccessTokenTtlMs },
    sessionRetentionMs: ctx.config.privacy.sessionRetentionMs,
    clock: ctx.clock,
    exportRetentionMs: ctx.config.privacy.exportRetentionMs,
    maxJobsPerOrganization: ctx.config.workers.maxJobsPerOrganization,
    mailer: ctx.mailer,
    sms: ctx.sms,
    tenantBatchShare: ctx.config.workers.tenantBatchShare,
    payloadRetentionMs: ctx.config.delivery.payloadRetentionMs,
    historyRetentionMs: ctx.config.privacy.historyRetentionMs,
    log: ctx.log,
  };
}

export function startWorker(ctx: AppContext, opts: { autostart?: boolean } = {}): RunningWorker {
  const runs = new Counter({
    name: 'service_worker_runs_total',
    help: 'Worker task runs by task and outcome',
    labelNames: ['task', 'outcome'],
    registers: [ctx.metrics.registry],
  });
  ctx.metrics.gauge('service_worker_active_leases', 'Task leases this worker process holds now', async () => {
    const r = await ctx.db.query<{ n: string }>(
      'select count(*) as n from worker_leases where holder = $1 and locked_until > $2',
      [WORKER_ID, ctx.clock.now()],
    );
    return Number(r.rows[0]?.n ?? 0);
  });
  const failedJobs = new Counter({
    name: 'service_jobs_failed_total',
    help: 'Jobs that ended failed or dead-lettered, by type',
    labelNames: ['type'],
    registers: [ctx.metrics.registry],
  });
  // Registered once per registry: the shared Metrics may already hold it for other channels.
  const deliveries =
    (ctx.metrics.registry.getSingleMetric('service_delivery_total') as
      | Counter<'channel' | 'outcome'>
      | undefined) ??
    new Counter({
      name: 'service_delivery_total',
      help: 'Outbound delivery attempts by channel and outcome',
      labelNames: ['channel', 'outcome'],
      registers: [ctx.metrics.registry],
    });
  const deps: WorkerDeps = {
    ...workerDeps(ctx),
    delivered(outcome) {
      deliveries.inc({ channel: 'notification', outcome });
    },
    jobEnded(type, end) {
      if (end === 'failed' || end === 'dead_letter') failedJobs.inc({ type });
    },
  };
  const scheduler = new Scheduler(ctx.db, deps, TASKS, () => ctx.clock.now(), ctx.log, {
    onRun(task, outcome) {
      runs.inc({ task, outcome });
    },
  });
  if (opts.autostart !== false) scheduler.start();
  let internal: Awaited<ReturnType<typeof buildInternalApp>> | null = null;
  return {
    scheduler,
    async listenInternal() {
      const listen = ctx.config.workers.metricsListen;
      if (!listen) return null;
      internal = buildInternalApp(ctx);
      const { host, port } = parseListen(listen);
      return internal.listen({ host, port });
    },
    async stop() {
      await scheduler.stop();
      await internal?.close();
    },
  };
}
