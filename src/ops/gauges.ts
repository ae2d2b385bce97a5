// Scrape-time gauges of a process with database access (spec doc 2, Metrics): each one runs its
// probe when /metrics is rendered. A probe that fails leaves its gauge without a sample instead of
// publishing a stale or made-up value; service_database_up alone always answers.
import type { Metrics } from '../platform/metrics.ts';
import {
  auditUnsealed,
  clockSkewMs,
  databaseUp,
  jobsBacklog,
  notificationBacklog,
  outboxBacklog,
  type ProbeContext,
  webhooksBacklog,
} from './probes.ts';

export function registerOpsGauges(metrics: Metrics, ctx: ProbeContext): void {
  // One registry per process; a second internal listener over it must not register twice.
  if (metrics.registry.getSingleMetric('service_database_up')) return;
  metrics.gauge(
    'service_database_up',
    'Whether the database answers a probe (1) or not (0)',
    async () => ((await databaseUp(ctx)) ? 1 : 0),
    'min',
  );
  metrics.gauge(
    'service_clock_skew_milliseconds',
    'Server clock minus database clock, query latency included',
    () => clockSkewMs(ctx),
  );
  metrics.gauge(
    'service_outbox_oldest_pending_seconds',
    'Age of the oldest event not yet dispatched from the outbox',
    () => outboxBacklog(ctx),
  );
  metrics.gauge(
    'service_notification_oldest_due_seconds',
    'Age of the oldest due notification (mail or SMS) not yet sent',
    () => notificationBacklog(ctx),
  );
  metrics.gauge(
    'service_webhook_oldest_due_seconds',
    'Age of the oldest webhook delivery whose attempt is due',
    () => webhooksBacklog(ctx),
  );
  metrics.gauge(
    'service_jobs_oldest_queued_seconds',
    'Age of the oldest due job still waiting for a worker',
    () => jobsBacklog(ctx),
  );
  metrics.gauge(
    'service_audit_unsealed_events',
    'Audit events not sealed into a batch yet',
    async () => (await auditUnsealed(ctx)).count,
  );
  metrics.gauge(
    'service_audit_unsealed_oldest_seconds',
    'Age of the oldest audit event not sealed into a batch yet',
    async () => (await auditUnsealed(ctx)).oldestSeconds,
  );
}
