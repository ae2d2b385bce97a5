// Shared setup of the jobs tests: job types that record their runs, queuing as a route would (in
// a transaction through the jobs context), and runners that play worker processes.
import type { JobRunnerDeps, JobType, ResultFormat } from '../../../src/jobs/index.ts';
import { JobRunner, queueJob } from '../../../src/jobs/index.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { rows } from '../../harness/signin-kit.ts';
import type { OrgSetup } from '../organizations/org-test-kit.ts';

/** A file-producing type under a real type name, recording each run's job id. */
export function fileJob(
  name: 'config.export' | 'audit.export',
  permission: string | null,
  format: ResultFormat,
  runs: string[] = [],
): JobType<JobRunnerDeps> & { runs: string[] } {
  return {
    name,
    permission,
    runs,
    async run(_deps, job) {
      runs.push(job.id);
      await job.progress('everything', 2);
      const body =
        format === 'json' ? JSON.stringify({ job: job.id, params: job.params }) : '{"n":1}\n{"n":2}\n';
      return { kind: 'file', format, body, counts: { records: 2 } };
    },
  };
}

export async function queue(
  s: OrgSetup,
  type: JobType<JobRunnerDeps>,
  requesterId: string,
  opts: { organizationId?: string; params?: Record<string, unknown>; key?: string } = {},
): Promise<string> {
  const q = await s.h.ctx.db.tx((tx) =>
    queueJob(tx, type, {
      realmId: s.realm.id,
      requester: { type: 'user', id: requesterId },
      now: s.h.clock.now(),
      organizationId: opts.organizationId ?? null,
      params: opts.params ?? {},
      idempotencyKey: opts.key ?? null,
    }),
  );
  return q.id;
}

export const runner = (s: OrgSetup, types: readonly JobType<JobRunnerDeps>[], holder = 'worker-a') =>
  new JobRunner(workerDeps(s.h.ctx), types, { holder });

export async function jobRow(s: OrgSetup, id: string) {
  const [row] = await rows(s.h, 'select * from jobs where realm_id = $1 and id = $2', [s.realm.id, id]);
  if (!row) throw new Error(`no job ${id}`);
  return row;
}

/** Removes every realm role of the user (a speed shortcut for DELETE /role-assignments/{id}). */
export async function dropRealmRoles(s: OrgSetup, userId: string) {
  await s.h.ctx.db.query(
    `delete from role_assignments where realm_id = $1 and subject_type = 'user' and subject_id = $2 and scope_type = 'realm'`,
    [s.realm.id, userId],
  );
}
