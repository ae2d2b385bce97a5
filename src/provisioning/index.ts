// The provisioning context's public surface (docs/provisioning.md): the push task, the
// directory.sync job type, and the count of failing targets for the gauge.
export { type DirectorySyncDeps, directorySyncJob } from './directory-sync.job.ts';
export { type ProvisioningPushDeps, pushProvisioningTask } from './provisioning-push.task.ts';
export { countFailingTargets } from './provisioning-targets.repo.ts';
export { nudgeProvisioning } from './push-nudge.ts';
