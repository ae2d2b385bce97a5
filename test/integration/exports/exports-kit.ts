// Shared steps of the export tests: run the worker's job types once, fetch a result through the
// download flow of spec doc 2 (Jobs and exports), and walk a document for fields that must not be there.
import assert from 'node:assert/strict';
import { JobRunner } from '../../../src/jobs/index.ts';
import { JOB_TYPES, type WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import type { Queryable } from '../../../src/platform/db/db.ts';
import { newId } from '../../../src/platform/ids.ts';
import type { ApiCallerKit } from '../../harness/api-kit.ts';
import type { OrgSetup } from '../organizations/org-test-kit.ts';

/** Runs due jobs with the worker's real job types; answers how they ended. */
export const runJobs = (s: OrgSetup) =>
  new JobRunner<WorkerDeps>(workerDeps(s.h.ctx) as WorkerDeps, JOB_TYPES, { holder: 'export-test' }).runDue(
    10,
  );

/** 202 {job_id} from an export request. */
export async function requestExport(caller: ApiCallerKit, path: string, body?: unknown): Promise<string> {
  const res = await caller.call('POST', path, body);
  assert.equal(res.status, 202, await res.clone().text());
  const { job_id } = (await res.json()) as { job_id: string };
  assert.match(job_id, /^job_[0-9a-z]{26}$/);
  return job_id;
}

export interface Download {
  contentType: string | null;
  disposition: string | null;
  text: string;
}

/** Polls the job (it must have succeeded), issues a token and redeems it. `prefix` '/me' for the account API. */
export async function download(
  caller: ApiCallerKit,
  jobId: string,
  prefix: '' | '/me' = '',
): Promise<Download> {
  const job = await caller.call('GET', `${prefix}/jobs/${jobId}`);
  assert.equal(job.status, 200, await job.clone().text());
  const record = (await job.json()) as { state: string; last_error: string | null };
  assert.equal(record.state, 'succeeded', String(record.last_error));
  const issued = await caller.call('POST', `${prefix}/jobs/${jobId}/downloads`);
  assert.equal(issued.status, 201, await issued.clone().text());
  const { download_token } = (await issued.json()) as { download_token: string };
  const file = await caller.call('POST', `${prefix}/job-downloads`, { download_token });
  assert.equal(file.status, 200, await file.clone().text());
  return {
    contentType: file.headers.get('content-type'),
    disposition: file.headers.get('content-disposition'),
    text: await file.text(),
  };
}

/** Member names anywhere in `value` (objects inside arrays included). */
export function memberNames(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) memberNames(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      memberNames(v, out);
    }
  return out;
}

/** Names of members that would carry secret material or credentials. */
export const SECRET_MEMBER =
  /secret|hash|seed|verifier|digest|sealed|private_key|token|cookie|internal_metadata|public_key|credential_id/;

export const keysOf = (o: unknown) => Object.keys(o as object).sort();

export const PASSKEY_MARKER = 'PASSKEY-CREDENTIAL-ID-MARKER';

/** A stored passkey of `userId` whose credential id and public key are markers the file must not carry. */
export async function seedPasskey(db: Queryable, realmId: string, userId: string, name: string, now: Date) {
  await db.query(
    `insert into webauthn_credentials (realm_id, id, user_id, credential_id, public_key, aaguid, backup_eligible,
       backup_state, user_verified, attestation_format, attestation_trusted, name, created_at)
     values ($1, $2, $3, $4, convert_to($4, 'UTF8'), '00000000-0000-0000-0000-000000000000', false, false, true,
       'none', false, $5, $6)`,
    [realmId, newId('wac', now.getTime()), userId, `${PASSKEY_MARKER}-${name}`, name, now],
  );
}
