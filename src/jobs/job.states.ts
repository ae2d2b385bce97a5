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
import { backoffMs, type RetryPolicy } from '../platform/work-queue/retry.ts';

export const JOB_STATES = ['queued', 'running', 'succeeded', 'failed', 'dead_letter', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** How long a claim lasts before another worker may take the job over; renewed while it runs. */
export const JOB_LEASE_MS = 5 * 60_000;
/**
 * Retries after a transient failure: 30 s, doubling, at most an hour; the 5th failed claim (crashed
 * runs included) dead-letters.
 */
export const JOB_RETRY: RetryPolicy = { firstMs: 30_000, capMs: 3_600_000, maxAttempts: 5 };
/** Claims of one job, crashed runs included, before it dead-letters. */
export const MAX_JOB_ATTEMPTS = JOB_RETRY.maxAttempts;
/** Download tokens live five minutes (spec doc 2, Jobs and exports). */
export const DOWNLOAD_TOKEN_TTL_SECONDS = 300;
export const DOWNLOAD_TOKEN_PREFIX = 'pa_dl_';

/** Wait before the next attempt after a transient failure. */
export const retryDelayMs = (attempts: number): number => backoffMs(JOB_RETRY, attempts);

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
