// SQL of the jobs table and its download tokens (spec doc 2, Job record; Jobs and exports).
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { defineQueue } from '../platform/work-queue/work-queue.ts';
import type { JobState } from './job.states.ts';

export interface JobRow {
  realm_id: string;
  id: string;
  type: string;
  state: JobState;
  organization_id: string | null;
  requested_by_type: string;
  requested_by_id: string | null;
  permission: string | null;
  params: Record<string, unknown>;
  result: Record<string, unknown> | null;
  result_sealed: string | null;
  result_expires_at: Date | null;
  last_error: string | null;
  progress: { section: string; records: number } | null;
  attempts: number;
  available_at: Date;
  locked_by: string | null;
  locked_until: Date | null;
  idempotency_key: string | null;
  request_fingerprint: string | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface NewJob {
  realmId: string;
  id: string;
  type: string;
  organizationId: string | null;
  requester: { type: string; id: string | null };
  permission: string | null;
  params: Record<string, unknown>;
  idempotencyKey: string | null;
  fingerprint: string;
}

/** Inserts the job; null when the requester already used the idempotency key. */
export async function insertJob(tx: Tx, j: NewJob, now: Date): Promise<string | null> {
  const r = await tx.query<{ id: string }>(
    `insert into jobs (realm_id, id, type, state, organization_id, requested_by_type, requested_by_id, permission,
       params, idempotency_key, request_fingerprint, available_at, created_at, updated_at)
     values ($1, $2, $3, 'queued', $4, $5, $6, $7, $8, $9, $10, $11, $11, $11)
     on conflict (realm_id, requested_by_type, requested_by_id, idempotency_key) where idempotency_key is not null
       do nothing
     returning id`,
    [
      j.realmId,
      j.id,
      j.type,
      j.organizationId,
      j.requester.type,
      j.requester.id,
      j.permission,
      JSON.stringify(j.params),
      j.idempotencyKey,
      j.fingerprint,
      now,
    ],
  );
  return r.rows[0]?.id ?? null;
}

export const findJobByIdempotencyKey = (
  q: Queryable,
  realmId: string,
  requester: { type: string; id: string | null },
  key: string,
) =>
  maybeOne<JobRow>(
    q,
    `select * from jobs where realm_id = $1 and requested_by_type = $2 and requested_by_id = $3
        and idempotency_key = $4`,
    [realmId, requester.type, requester.id, key],
  );

export const findJob = (q: Queryable, realmId: string, id: string) =>
  maybeOne<JobRow>(q, 'select * from jobs where realm_id = $1 and id = $2', [realmId, id]);

export const lockJob = (tx: Tx, realmId: string, id: string) =>
  maybeOne<JobRow>(tx, 'select * from jobs where realm_id = $1 and id = $2 for update', [realmId, id]);

/**
 * The jobs table as a work queue (platform/work-queue): a claim moves a job from queued to running
 * under a lease; a running job whose lease ran out (its worker died) is claimed again; at most
 * workers.max_jobs_per_organization jobs of one organization hold live leases at once (spec doc 2,
 * Limits: tenant fairness), realm-wide jobs are outside that share.
 */
export const JOB_QUEUE = defineQueue<JobRow>({
  table: 'jobs',
  waiting: "state = 'queued'",
  dueAt: 'available_at',
  claimed: { state: 'running', releasedTo: 'queued' },
  touched: 'updated_at',
  onClaim: 'started_at = coalesce(started_at, {now})',
  fairness: { column: 'organization_id', limit: 'leased', unowned: 'exempt' },
});

/** Claims the oldest due job this worker may run now, if any. */
export async function claimNextJob(
  tx: Tx,
  holder: string,
  now: Date,
  leaseUntil: Date,
  perOrg: number,
): Promise<JobRow | null> {
  const [job] = await JOB_QUEUE.claim(tx, { holder, now, leaseUntil, limit: 1, share: perOrg });
  return job ?? null;
}

export async function setJobProgress(
  q: Queryable,
  realmId: string,
  id: string,
  holder: string,
  progress: { section: string; records: number },
  now: Date,
): Promise<void> {
  await q.query(
    `update jobs set progress = $4, updated_at = $5
      where realm_id = $1 and id = $2 and locked_by = $3 and state = 'running'`,
    [realmId, id, holder, JSON.stringify(progress), now],
  );
}

export interface JobEnd {
  state: JobState;
  lastError?: string | null;
  result?: Record<string, unknown> | null;
  sealed?: string | null;
  resultExpiresAt?: Date | null;
  availableAt?: Date;
}

/** Moves a job its holder has locked (lockJob) to its next state and gives up the lease. */
export async function endJobRun(tx: Tx, realmId: string, id: string, end: JobEnd, now: Date): Promise<void> {
  const final = end.state !== 'queued' && end.state !== 'running';
  await tx.query(
    `update jobs set state = $3, last_error = $4, result = coalesce($5, result), result_sealed = $6,
       result_expires_at = $7, available_at = coalesce($8, available_at), finished_at = $9,
       locked_by = null, locked_until = null, updated_at = $10
      where realm_id = $1 and id = $2`,
    [
      realmId,
      id,
      end.state,
      end.lastError ?? null,
      end.result === undefined || end.result === null ? null : JSON.stringify(end.result),
      end.sealed ?? null,
      end.resultExpiresAt ?? null,
      end.availableAt ?? null,
      final ? now : null,
      now,
    ],
  );
}

/** spec doc 2, Export retention: sealed results past their time are erased (metadata stays). */
export async function purgeExpiredResults(q: Queryable, now: Date, limit: number): Promise<number> {
  const r = await q.query(
    `update jobs set result_sealed = null, updated_at = $1
      where (realm_id, id) in (select realm_id, id from jobs
                                where result_sealed is not null and result_expires_at <= $1 limit $2)`,
    [now, limit],
  );
  return r.rowCount;
}

/** Download tokens a day past their expiry are of no use to anyone, used or not. */
export async function deleteOldDownloadTokens(q: Queryable, before: Date, limit: number): Promise<number> {
  const r = await q.query(
    `delete from job_download_tokens where (realm_id, token_digest) in (
       select realm_id, token_digest from job_download_tokens where expires_at <= $1 limit $2)`,
    [before, limit],
  );
  return r.rowCount;
}

// ---- download tokens -----------------------------------------------------------------------------

export interface DownloadTokenRow {
  realm_id: string;
  token_digest: string;
  job_id: string;
  requester_type: string;
  requester_id: string;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

export async function insertDownloadToken(tx: Tx, t: Omit<DownloadTokenRow, 'used_at'>): Promise<void> {
  await tx.query(
    `insert into job_download_tokens (realm_id, token_digest, job_id, requester_type, requester_id, created_at,
       expires_at) values ($1, $2, $3, $4, $5, $6, $7)`,
    [t.realm_id, t.token_digest, t.job_id, t.requester_type, t.requester_id, t.created_at, t.expires_at],
  );
}

export const lockDownloadToken = (tx: Tx, realmId: string, digest: string) =>
  maybeOne<DownloadTokenRow>(
    tx,
    'select * from job_download_tokens where realm_id = $1 and token_digest = $2 for update',
    [realmId, digest],
  );

export async function useDownloadToken(tx: Tx, realmId: string, digest: string, now: Date): Promise<void> {
  await tx.query('update job_download_tokens set used_at = $3 where realm_id = $1 and token_digest = $2', [
    realmId,
    digest,
    now,
  ]);
}

/** Seconds the oldest due job has waited; 0 when none (spec doc 2, status and metrics). */
export const oldestQueuedJobSeconds = (q: Queryable, now: Date): Promise<number> =>
  JOB_QUEUE.oldestDueSeconds(q, now);

// ---- organization deletion (spec doc 2, Organization deletion) ------------------------------------

/** The job of `type` for the organization that is queued or running, if any. */
export const findLiveJobOfOrganization = (q: Queryable, realmId: string, orgId: string, type: string) =>
  maybeOne<{ id: string; state: string }>(
    q,
    `select id, state from jobs where realm_id = $1 and organization_id = $2 and type = $3
        and state in ('queued', 'running')`,
    [realmId, orgId, type],
  );

/** Job results of the organization are erased when its deletion starts: the metadata and the file. */
export async function eraseJobResultsOfOrganization(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<number> {
  const r = await tx.query(
    `update jobs set result = null, result_sealed = null, result_expires_at = null, updated_at = $3
      where realm_id = $1 and organization_id = $2 and (result is not null or result_sealed is not null)`,
    [realmId, orgId, now],
  );
  return r.rowCount;
}
