// The worker process body: the scheduler over TASKS, its metrics, and the optional internal
// listener (spec doc 2: served only when workers.metrics_listen is set).
import { parseRetentionByCategory } from '../../audit/index.ts';
import { parseListen } from '../../platform/config/load.ts';
import type { Db } from '../../platform/db/db.ts';
import { RESTORE_PENDING_REFUSAL, restoreMarkerSet } from '../../platform/restore-marker.ts';
import { type AppContext, requireKeyring } from '../context.ts';
import { buildInternalApp } from '../http-server.ts';
import { provisioningMetrics } from './provisioning-metrics.ts';
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
    auditRetention: {
      defaultMs: ctx.config.privacy.auditRetentionMs,
      byCategoryMs: parseRetentionByCategory(ctx.config.privacy.auditRetentionByCategory),
    },
    auditArchiveDir: ctx.config.privacy.auditArchiveDir,
    clock: ctx.clock,
    exportRetentionMs: ctx.config.privacy.exportRetentionMs,
    maxJobsPerOrganization: ctx.config.workers.maxJobsPerOrganization,
    mailer: ctx.mailer,
    sms: ctx.sms,
    tenantBatchShare: ctx.config.workers.tenantBatchShare,
    payloadRetentionMs: ctx.config.delivery.payloadRetentionMs,
    outbound: ctx.outbound,
    policy: ctx.webhooks.policy,
    webhookTimeoutMs: ctx.config.delivery.webhookTimeoutMs,
    webhookMaxAttempts: ctx.config.delivery.webhookMaxAttempts,
    historyRetentionMs: ctx.config.privacy.historyRetentionMs,
    log: ctx.log,
    publicOrigin: ctx.config.server.publicOrigin,
    keyStore: ctx.keyStore,
    egressAllowlist: ctx.config.delivery.egressAllowlist,
    allowedDestinations: ctx.webhooks.policy.allowedDestinations,
    hasher: ctx.hasher,
  };
}

/** Why this worker takes no work now: the restore marker is set (document 2, Restore marker). */
const refusesWork = async (db: Db): Promise<string | null> =>
  (await restoreMarkerSet(db)) ? 'restore_pending' : null;

/** The worker does not start on a restored database that is not reconciled yet. */
export async function refuseWhileRestorePending(db: Db): Promise<void> {
  if (await restoreMarkerSet(db)) throw new Error(RESTORE_PENDING_REFUSAL);
}

export function startWorker(ctx: AppContext, opts: { autostart?: boolean } = {}): RunningWorker {
  const runs = ctx.metrics.counter('service_worker_runs_total', 'Worker task runs by task and outcome', [
    'task',
    'outcome',
  ]);
  ctx.metrics.gauge('service_worker_active_leases', 'Task leases this worker process holds now', async () => {
    const r = await ctx.db.query<{ n: string }>(
      'select count(*) as n from worker_leases where holder = $1 and locked_until > $2',
      [WORKER_ID, ctx.clock.now()],
    );
    return Number(r.rows[0]?.n ?? 0);
  });
  const failedJobs = ctx.metrics.counter(
    'service_jobs_failed_total',
    'Jobs that ended failed or dead-lettered, by type',
    ['type'],
  );
  const securityEvents = ctx.metrics.counter(
    'service_security_events_total',
    'Security events (event types security.*) the outbox dispatched, by type',
    ['type'],
  );
  const { pushed, synced } = provisioningMetrics(ctx);
  // Worker only (spec doc 2, Metrics): no sample until the first audit.verify_recent run.
  let integrityProblems: number | null = null;
  // A second worker over the same metrics (tests) reports its own runs.
  ctx.metrics.registry.removeSingleMetric('service_audit_integrity_problems');
  ctx.metrics.gauge(
    'service_audit_integrity_problems',
    'Problems the last audit.verify_recent found among the newest 200 sealed audit batches (failing batches and gaps)',
    async () => integrityProblems,
  );
  const deps: WorkerDeps = {
    ...workerDeps(ctx),
    onAuditIntegrity(report) {
      integrityProblems = report.problems;
    },
    delivered(outcome) {
      ctx.metrics.deliveries.inc({ channel: 'notification', outcome });
    },
    jobEnded(type, end) {
      if (end === 'failed' || end === 'dead_letter') failedJobs.inc({ type });
    },
    eventsDispatched(types) {
      for (const type of types) if (type.startsWith('security.')) securityEvents.inc({ type });
    },
    deliveryEnded(outcome) {
      ctx.metrics.deliveries.inc({ channel: 'webhook', outcome });
    },
    logoutDeliveryEnded(outcome) {
      ctx.metrics.deliveries.inc({ channel: 'backchannel_logout', outcome });
    },
    provisioningPushed: pushed,
    directorySynced: synced,
  };
  const scheduler = new Scheduler(ctx.db, deps, TASKS, () => ctx.clock.now(), ctx.log, {
    onRun(task, outcome) {
      runs.inc({ task, outcome });
    },
    refusesWork: () => refusesWork(ctx.db),
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
      await ctx.outbound.close();
    },
  };
}
