// The worker's periodic tasks: name, interval, function (docs/architecture.md, where does this rule
// live: which worker tasks run).

import { deleteExpiredProofs } from '../../access/dpop.ts';
import {
  archiveAudit,
  type IntegrityReport,
  type RetentionSettings,
  sealAudit,
  verifyRecentAudit,
} from '../../audit/index.ts';
import { userBulkJob } from '../../bulk/user-bulk.job.ts';
import { type ConfigExportDeps, configExportJob } from '../../configuration/config-export.job.ts';
import { cleanupOutbox, dispatchOutboxTo, type OutboxDispatchDeps } from '../../events/index.ts';
import { auditExportJob } from '../../exports/audit-export.job.ts';
import { realmExportJob } from '../../exports/realm-export.job.ts';
import { userExportJob } from '../../exports/user-export.job.ts';
import { cleanupTransferEntries } from '../../identity-providers/transfers-cleanup.task.ts';
import { cleanupImports } from '../../imports/imports-cleanup.task.ts';
import { userImportJob } from '../../imports/user-import.job.ts';
import { type JobRunnerDeps, type JobType, purgeJobResults, runJobsTask } from '../../jobs/index.ts';
import type { Task } from '../../kernel/task.ts';
import { type KeyLifecycleDeps, runKeyLifecycle } from '../../keys/key-lifecycle.task.ts';
import {
  cleanupNotifications,
  type NotificationCleanupDeps,
  type NotificationDeps,
  sendNotificationsTask,
} from '../../notifications/index.ts';
import {
  type BackchannelLogoutDeps,
  cleanupLogoutDeliveries,
  deliverLogoutsTask,
} from '../../oauth/backchannel-logout.task.ts';
import {
  cleanupSharedSignals,
  deliverSharedSignalsTask,
  type SharedSignalsDeps,
} from '../../oauth/shared-signals.task.ts';
import { cleanupAuditRetention } from '../../ops/audit-retention.task.ts';
import { sweepMemberships } from '../../organizations/membership-expiry.task.ts';
import { organizationDeleteJob } from '../../organizations/organization-delete.job.ts';
import {
  type DirectorySyncDeps,
  directorySyncJob,
  nudgeProvisioning,
  type ProvisioningPushDeps,
  pushProvisioningTask,
} from '../../provisioning/index.ts';
import { runAssistedRecoveriesDue } from '../../recovery/assisted-recovery-due.task.ts';
import { closeDueReviews } from '../../reviews/access-reviews.close.ts';
import { pruneSessionEventsTask } from '../../sessions/session-events-prune.task.ts';
import { cleanupTokens } from '../../sessions/token-cleanup.task.ts';
import { cleanupSignin } from '../../signin/signin-cleanup.task.ts';
import { runLifecycleRules } from '../../users/lifecycle.task.ts';
import { eraseDueAccounts } from '../../users/self-deletion.ts';
import {
  cleanupDeliveries,
  deliverWebhooksTask,
  fanOutToWebhooks,
  type WebhookDeliveryDeps,
} from '../../webhooks/index.ts';
import { startEventRuns } from '../../workflows/workflow-triggers.ts';
import { runWorkflows } from '../../workflows/workflows.task.ts';
import { WORKER_ID } from './scheduler.ts';

export type WorkerDeps = KeyLifecycleDeps &
  JobRunnerDeps &
  NotificationDeps &
  NotificationCleanupDeps &
  WebhookDeliveryDeps &
  BackchannelLogoutDeps &
  SharedSignalsDeps &
  ConfigExportDeps &
  ProvisioningPushDeps &
  DirectorySyncDeps &
  OutboxDispatchDeps & {
    sessionRetentionMs: number;
    auditRetention: RetentionSettings;
    auditArchiveDir: string | null;
    /** What the last audit.verify_recent run found (service_audit_integrity_problems). */
    onAuditIntegrity?: (report: IntegrityReport) => void;
  };

/**
 * The job types the worker runs (docs/jobs.md), each declared beside the context it works on in a
 * `*.job.ts` file. Adding a type is one entry here, its file, and the route that queues it.
 */
export const JOB_TYPES: readonly JobType<WorkerDeps>[] = [
  organizationDeleteJob,
  configExportJob,
  realmExportJob,
  auditExportJob,
  userExportJob,
  userImportJob,
  userBulkJob,
  directorySyncJob,
];

export const TASKS: readonly Task<WorkerDeps>[] = [
  { name: 'keys.lifecycle', intervalMs: 60_000, run: runKeyLifecycle },
  // Committed events fan out to webhook subscriptions, start the runs of lifecycle workflows
  // waiting for them (docs/workflows.md) and bring provisioning targets' next push forward
  // (docs/provisioning.md), in the dispatch transaction.
  {
    name: 'outbox.dispatch',
    intervalMs: 1_000,
    run: (deps, now) => dispatchOutboxTo(deps, now, [fanOutToWebhooks, startEventRuns, nudgeProvisioning]),
  },
  { name: 'outbox.cleanup', intervalMs: 3_600_000, run: cleanupOutbox },
  { name: 'signin.cleanup', intervalMs: 600_000, run: cleanupSignin },
  // DPoP proof records (access/dpop.ts) go with the other expired token records.
  {
    name: 'tokens.cleanup',
    intervalMs: 600_000,
    run: async (deps, now) => ({
      ...(await cleanupTokens(deps, now)),
      dpop_proofs: await deleteExpiredProofs(deps.db, now, 1000),
    }),
  },
  { name: 'session_events.prune', intervalMs: 600_000, run: pruneSessionEventsTask },
  { name: 'organizations.memberships', intervalMs: 60_000, run: sweepMemberships },
  // Every worker runs jobs; each job is claimed under its own lease (jobs/job-runner.ts).
  { name: 'jobs.run', intervalMs: 1_000, lease: false, run: runJobsTask(JOB_TYPES, WORKER_ID) },
  { name: 'jobs.purge', intervalMs: 600_000, run: purgeJobResults },
  // document 2, Limits: access reviews closed 20 at a time every 30 seconds (docs/access-reviews.md).
  { name: 'access_reviews.close', intervalMs: 30_000, run: closeDueReviews },
  // document 2, Limits: lifecycle workflows, 20 workflows a pass (docs/workflows.md).
  { name: 'workflows.run', intervalMs: 30_000, run: runWorkflows },
  // Every worker sends; each message is claimed under its own lease (notifications/).
  { name: 'notifications.send', intervalMs: 1_000, lease: false, run: sendNotificationsTask(WORKER_ID) },
  { name: 'notifications.cleanup', intervalMs: 3_600_000, run: cleanupNotifications },
  { name: 'users.deletion', intervalMs: 300_000, run: eraseDueAccounts },
  // The four lifecycle rules (docs/api-users.md, Lifecycle rules), under the task's lease.
  { name: 'lifecycle.users', intervalMs: 600_000, run: runLifecycleRules },
  // Assisted recoveries that came due: executed, cancelled by a re-check, or expired (docs/recovery.md).
  { name: 'recovery.assisted_due', intervalMs: 60_000, run: runAssistedRecoveriesDue },
  // Every worker delivers; each delivery attempt is claimed under its own lease.
  { name: 'webhooks.deliver', intervalMs: 1_000, lease: false, run: deliverWebhooksTask(WORKER_ID) },
  { name: 'webhooks.cleanup', intervalMs: 3_600_000, run: cleanupDeliveries },
  // Every worker pushes; each provisioning target is claimed under its own lease (docs/provisioning.md).
  { name: 'provisioning.push', intervalMs: 5_000, lease: false, run: pushProvisioningTask(WORKER_ID) },
  // Logout tokens to back-channel logout receivers (docs/logout-and-signals.md).
  {
    name: 'backchannel_logout.deliver',
    intervalMs: 1_000,
    lease: false,
    run: deliverLogoutsTask(WORKER_ID),
  },
  { name: 'backchannel_logout.cleanup', intervalMs: 3_600_000, run: cleanupLogoutDeliveries },
  // Security event tokens to Shared Signals streams: every 2 s, up to 50 events a run.
  { name: 'ssf.deliver', intervalMs: 2_000, lease: false, run: deliverSharedSignalsTask(WORKER_ID) },
  { name: 'ssf.cleanup', intervalMs: 3_600_000, run: cleanupSharedSignals },
  // Audit evidence (docs/audit.md): sealing, the hourly chain check, archive, retention.
  { name: 'audit.seal', intervalMs: 10_000, run: sealAudit },
  {
    name: 'audit.verify_recent',
    intervalMs: 3_600_000,
    run: async (deps) => {
      const report = await verifyRecentAudit(deps);
      deps.onAuditIntegrity?.(report);
      return { checked: report.checked, problems: report.problems };
    },
  },
  { name: 'audit.archive', intervalMs: 60_000, run: archiveAudit },
  { name: 'retention.cleanup', intervalMs: 300_000, run: cleanupAuditRetention },
  { name: 'imports.cleanup', intervalMs: 3_600_000, run: cleanupImports },
  { name: 'federation_transfers.cleanup', intervalMs: 3_600_000, run: cleanupTransferEntries },
];
