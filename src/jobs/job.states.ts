// Job states (spec doc 2, Job; Job record) and the pure rules of moving between them.
//
//   queued  --claimed under a lease-->  running
//   running --lease runs out (worker crashed)--> claimed again by another worker
//   running --result stored or changes applied--> succeeded
//   running --requester lost the permission, or is inactive--> dead_letter (nothing ran)
//   running --transient failure--> queued (backoff) ... after MAX_ATTEMPTS: dead_letter
//   running --permanent failure--> failed
//   running --its organization is deleted--> cancelled
//
// succeeded, failed, dead_letter and cancelled are final.

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'dead_letter', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** How long a claim lasts before another worker may take the job over; renewed while it runs. */
export const JOB_LEASE_MS = 5 * 60_000;
/** Claims of one job, crashed runs included, before it dead-letters. */
export const MAX_JOB_ATTEMPTS = 5;
/** Download tokens live five minutes (spec doc 2, Jobs and exports). */
export const DOWNLOAD_TOKEN_TTL_SECONDS = 300;
export const DOWNLOAD_TOKEN_PREFIX = 'pa_dl_';

/** Wait before the next attempt after a transient failure: 30 s, doubling, at most an hour. */
export const retryDelayMs = (attempts: number): number =>
  Math.min(3_600_000, 30_000 * 2 ** Math.max(0, attempts - 1));

export type ResultFormat = 'json' | 'ndjson';

/** spec doc 2, download rules: the content type and attachment name follow the file's format. */
export function downloadFormOf(format: ResultFormat): { contentType: string; filename: string } {
  return format === 'ndjson'
    ? { contentType: 'application/x-ndjson', filename: 'export.ndjson' }
    : { contentType: 'application/json', filename: 'export.json' };
}

/** The failure text a requester who lost authority leaves on the job (spec doc 2, Errors). */
export const lostPermissionError = (permission: string): string =>
  `permanent failure: the requester no longer holds the permission ${permission}`;
export const inactiveRequesterError = 'permanent failure: the requester is no longer active';
