// The jobs context's public surface (docs/jobs.md): what a job type declares, queuing a job from a
// request, and the worker tasks. Other folders never import jobs.repo.ts.
export {
  DOWNLOAD_TOKEN_PREFIX,
  downloadFormOf,
  JOB_STATES,
  type JobState,
  lostPermissionError,
  type ResultFormat,
} from './job.states.ts';
export { idempotencyKeyOf, type JobRequest, type QueuedJob, queueJob, replayedJob } from './job-requests.ts';
export { JobRunner, type JobRunnerDeps, type RunEnd } from './job-runner.ts';
export {
  authorityLost,
  type Counts,
  type JobFailure,
  type JobOutcome,
  type JobType,
  type JobTypeName,
  permanentFailure,
  type RunningJob,
} from './job-type.ts';
export {
  eraseJobResultsOfOrganization,
  findLiveJobOfOrganization,
  oldestQueuedJobSeconds,
} from './jobs.repo.ts';
export { purgeJobResults, runJobsTask } from './jobs.task.ts';
