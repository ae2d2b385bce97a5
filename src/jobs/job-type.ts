// What a job type declares (docs/jobs.md): its name, the permission the worker re-checks on its
// requester, and the function that does the work. Types sit beside the context whose data they
// touch (`*.job.ts`); main/worker/job-types.ts lists the ones the worker runs.
import type { Recorder } from '../audit/evidence.ts';
import type { Actor } from '../kernel/call.ts';
import type { Tx } from '../platform/db/db.ts';
import type { ResultFormat } from './job.states.ts';

/** The job types of spec doc 2, Job record. */
export type JobTypeName =
  | 'audit.export'
  | 'config.export'
  | 'realm.export'
  | 'user.import'
  | 'user.bulk'
  | 'user.export'
  | 'organization.delete'
  | 'directory.sync';

export type Counts = Record<string, number>;

/** A job the worker holds the lease of, as its run function sees it. */
export interface RunningJob {
  id: string;
  realmId: string;
  type: string;
  organizationId: string | null;
  params: Record<string, unknown>;
  requester: Actor;
  /** 1 on the first claim. */
  attempts: number;
  /** The clock reading of the claim. */
  now: Date;
  /** Records the last section written and its record count (spec doc 2, Job record: progress). */
  progress(section: string, records: number): Promise<void>;
}

export type JobOutcome =
  /** A file for the requester: sealed under the root key, downloadable until the retention ends. */
  | { kind: 'file'; format: ResultFormat; body: string | Buffer; counts?: Counts }
  /**
   * Changes committed in the transaction that marks the job succeeded (and only if this worker
   * still holds the lease), with the evidence recorder of that transaction and its clock reading;
   * answers the counts.
   */
  | {
      kind: 'apply';
      /**
       * Asked inside that transaction before apply: a requester who lost authority since the run
       * began answers the failure text, and the job dead-letters with nothing written.
       */
      authority?(tx: Tx, now: Date): Promise<string | null>;
      apply(tx: Tx, record: Recorder, now: Date): Promise<Counts>;
    }
  /** Nothing left to do for a reason outside the job (its organization was deleted). */
  | { kind: 'cancelled'; reason: string }
  | JobFailure;

/**
 * Permanent: the job fails. Transient: it is tried again later, up to the attempt limit.
 * deadLetter: the requester lost authority the job needs (spec doc 2, Job states).
 */
export interface JobFailure {
  kind: 'failure';
  permanent: boolean;
  message: string;
  deadLetter?: boolean;
}

export const permanentFailure = (message: string): JobFailure => ({
  kind: 'failure',
  permanent: true,
  message,
});

/** The requester no longer holds what the job needs: the job dead-letters without running. */
export const authorityLost = (message: string): JobFailure => ({
  kind: 'failure',
  permanent: true,
  message,
  deadLetter: true,
});

export interface JobType<D> {
  name: JobTypeName;
  /**
   * Re-checked on the requester when the job runs (dead_letter without it) and, for jobs with a
   * file, when a download token is issued and redeemed. Null: the job needs none (user.export).
   * An org.* permission is checked inside the job's organization.
   */
  permission: string | null;
  /**
   * Runs while the job's organization is being deleted (the deletion job itself); any other job
   * of an organization that is deleting or deleted ends cancelled.
   */
  runsWhileOrganizationDeleting?: boolean;
  run(deps: D, job: RunningJob): Promise<JobOutcome>;
}
