// Runs queued jobs under leases (spec doc 2, Jobs and exports; Job). A worker claims one job in a
// short transaction (FOR UPDATE SKIP LOCKED), re-checks its requester, runs its type's function
// with the lease renewed meanwhile, and ends the run in one transaction that first locks the row
// and confirms the lease is still its own: a worker whose lease was taken over commits nothing,
// so a job's effects and its final state commit once, whoever ran it.
import { createHash } from 'node:crypto';
import { recorder } from '../audit/index.ts';
import { type Actor, type ActorType, workerRun } from '../kernel/call.ts';
import type { Clock } from '../platform/clock.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import { inSpan } from '../platform/tracing.ts';
import { afterFailure, overAttemptLimit } from '../platform/work-queue/retry.ts';
import { findLiveOrganization, standingOf } from '../roles/index.ts';
import {
  downloadFormOf,
  inactiveRequesterError,
  JOB_LEASE_MS,
  JOB_RETRY,
  lostPermissionError,
  MAX_JOB_ATTEMPTS,
} from './job.states.ts';
import type { JobOutcome, JobType, RunningJob } from './job-type.ts';
import { claimNextJob, endJobRun, JOB_QUEUE, type JobEnd, type JobRow, setJobProgress } from './jobs.repo.ts';

export interface JobRunnerDeps {
  db: Db;
  keyring: RootKeyring;
  clock: Clock;
  /** privacy.export_retention */
  exportRetentionMs: number;
  /** workers.max_jobs_per_organization */
  maxJobsPerOrganization: number;
  /** Told how each claimed run ended (the worker counts failures in service_jobs_failed_total). */
  jobEnded?: (type: string, end: RunEnd) => void;
}

export interface JobRunnerOptions {
  /** Lease holder: one per worker process; tests play two workers with two names. */
  holder: string;
  leaseMs?: number;
  log?: Logger;
}

/** How one claimed run ended, from this worker's point of view. */
export type RunEnd =
  | 'succeeded'
  | 'failed'
  | 'dead_letter'
  | 'cancelled'
  | 'retry'
  | 'released'
  | 'lease_lost';

/** The row binding of a sealed result: a result moved to another job row does not open. */
export const resultAad = (realmId: string, jobId: string) => `${realmId}/${jobId}`;

const requesterOf = (job: JobRow): Actor => ({
  type: job.requested_by_type as ActorType,
  id: job.requested_by_id,
});

export class JobRunner<D extends JobRunnerDeps> {
  readonly #deps: D;
  readonly #types: ReadonlyMap<string, JobType<D>>;
  readonly #holder: string;
  readonly #leaseMs: number;
  readonly #log: Logger | undefined;

  constructor(deps: D, types: readonly JobType<D>[], opts: JobRunnerOptions) {
    this.#deps = deps;
    this.#types = new Map(types.map((t) => [t.name, t]));
    this.#holder = opts.holder;
    this.#leaseMs = opts.leaseMs ?? JOB_LEASE_MS;
    this.#log = opts.log;
  }

  /** Claims and runs due jobs one after another, at most `max`; answers how each ended. */
  async runDue(max: number): Promise<Record<string, number>> {
    const report: Record<string, number> = {};
    for (let i = 0; i < max; i++) {
      const end = await this.runNext();
      if (end === null) break;
      report[end] = (report[end] ?? 0) + 1;
    }
    return report;
  }

  /** Claims one due job and runs it; null when none is due. */
  async runNext(): Promise<RunEnd | null> {
    const { db, clock } = this.#deps;
    const now = clock.now();
    const job = await db.tx((tx) =>
      claimNextJob(
        tx,
        this.#holder,
        now,
        new Date(now.getTime() + this.#leaseMs),
        this.#deps.maxJobsPerOrganization,
      ),
    );
    if (!job) return null;
    const runId = workerRun.getStore()?.runId;
    const end = await inSpan(
      `job ${job.type}`,
      'internal',
      {
        'proudauth.job_type': job.type,
        'proudauth.job_id': job.id,
        ...(runId ? { 'proudauth.run_id': runId } : {}),
      },
      () => this.#run(job, now),
    );
    this.#deps.jobEnded?.(job.type, end);
    return end;
  }

  async #run(job: JobRow, now: Date): Promise<RunEnd> {
    const type = this.#types.get(job.type);
    if (!type) {
      // A worker of another release may know it; this one gives the job back untouched.
      const given = await JOB_QUEUE.release(
        this.#deps.db,
        job,
        this.#holder,
        new Date(now.getTime() + 60_000),
        now,
      );
      return given ? 'released' : 'lease_lost';
    }
    if (overAttemptLimit(JOB_RETRY, job.attempts))
      return this.#end(
        job,
        { kind: 'failure', permanent: true, message: `gave up after ${MAX_JOB_ATTEMPTS} attempts` },
        'dead_letter',
      );
    const refusal = await this.#authority(job, type, now);
    if (refusal) return this.#end(job, { kind: 'failure', permanent: true, message: refusal }, 'dead_letter');
    if (job.organization_id && !type.runsWhileOrganizationDeleting) {
      const org = await findLiveOrganization(this.#deps.db, job.realm_id, job.organization_id);
      if (!org) return this.#end(job, { kind: 'cancelled', reason: 'the organization was deleted' });
    }
    const outcome = await this.#runType(job, type, now);
    return this.#end(job, outcome);
  }

  /** spec doc 2, Jobs and exports: the requester still holds the type's permission, unconditionally. */
  async #authority(job: JobRow, type: JobType<D>, now: Date): Promise<string | null> {
    const p = type.permission;
    const orgId = p?.startsWith('org.') ? job.organization_id : null;
    // An inactive requester stops even a job that needs no permission (spec doc 2, Job).
    const standing = await standingOf(this.#deps.db, job.realm_id, requesterOf(job), orgId, now);
    if (!standing.active) return inactiveRequesterError;
    if (p !== null && !standing.permissions.has(p)) return lostPermissionError(p);
    return null;
  }

  async #runType(job: JobRow, type: JobType<D>, now: Date): Promise<JobOutcome> {
    const { db } = this.#deps;
    const running: RunningJob = {
      id: job.id,
      realmId: job.realm_id,
      type: job.type,
      organizationId: job.organization_id,
      params: job.params ?? {},
      requester: requesterOf(job),
      attempts: job.attempts,
      now,
      progress: (section, records) =>
        setJobProgress(db, job.realm_id, job.id, this.#holder, { section, records }, this.#deps.clock.now()),
    };
    // The lease is renewed while the function runs, so a long export keeps its job.
    const renew = setInterval(
      () => {
        const until = new Date(this.#deps.clock.now().getTime() + this.#leaseMs);
        JOB_QUEUE.renew(db, job, this.#holder, until).catch(() => {});
      },
      Math.max(1000, Math.floor(this.#leaseMs / 3)),
    );
    renew.unref();
    try {
      return await type.run(this.#deps, running);
    } catch (e) {
      // Unexpected errors are retried; their text stays in the log, not in the job record.
      this.#log?.error({ job_id: job.id, job_type: job.type, err: e }, 'job run failed');
      return { kind: 'failure', permanent: false, message: 'internal error; the job is retried' };
    } finally {
      clearInterval(renew);
    }
  }

  /** Ends the run in one transaction, only while this worker still holds the lease. */
  async #end(job: JobRow, outcome: JobOutcome, failureState?: 'dead_letter'): Promise<RunEnd> {
    const { db, clock, keyring, exportRetentionMs } = this.#deps;
    const now = clock.now();
    return db.tx(async (tx) => {
      const current = await JOB_QUEUE.lockClaimed(tx, job, this.#holder);
      if (!current) return 'lease_lost';
      let end: JobEnd;
      switch (outcome.kind) {
        case 'file': {
          const body = typeof outcome.body === 'string' ? Buffer.from(outcome.body, 'utf8') : outcome.body;
          const form = downloadFormOf(outcome.format);
          end = {
            state: 'succeeded',
            result: {
              format: outcome.format,
              content_type: form.contentType,
              bytes: body.length,
              sha256: createHash('sha256').update(body).digest('hex'),
              counts: outcome.counts ?? {},
            },
            sealed: keyring.encrypt('job-result', body, resultAad(job.realm_id, job.id)),
            resultExpiresAt: new Date(now.getTime() + exportRetentionMs),
          };
          break;
        }
        case 'apply': {
          const refusal = await outcome.authority?.(tx, now);
          if (refusal) {
            end = { state: 'dead_letter', lastError: refusal };
            break;
          }
          const call = {
            realmId: job.realm_id,
            actor: { type: 'system' as const, id: null },
            correlationId: job.id,
            now,
          };
          const counts = await outcome.apply(tx, recorder(tx, call), now);
          end = { state: 'succeeded', result: { counts } };
          break;
        }
        case 'cancelled':
          end = { state: 'cancelled', lastError: outcome.reason };
          break;
        case 'failure': {
          const deadEnd = failureState ?? (outcome.deadLetter ? 'dead_letter' : undefined);
          if (deadEnd) {
            end = { state: deadEnd, lastError: outcome.message };
            break;
          }
          const next = afterFailure(JOB_RETRY, current.attempts, outcome.permanent, now);
          if (next.kind === 'permanent') end = { state: 'failed', lastError: outcome.message };
          else if (next.kind === 'exhausted')
            end = {
              state: 'dead_letter',
              lastError: `${outcome.message} (gave up after ${current.attempts} attempts)`,
            };
          else end = { state: 'queued', lastError: outcome.message, availableAt: next.at };
          break;
        }
      }
      await endJobRun(tx, job.realm_id, job.id, end, now);
      return end.state === 'queued' ? 'retry' : (end.state as RunEnd);
    });
  }
}
