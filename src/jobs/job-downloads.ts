// Download tokens for job results (spec doc 2, Jobs and exports, download rules): issued only to
// the requester, single use, five minutes, stored as digests; the requester's permission is
// checked at issue and at redemption, and a refusal leaves the token usable. Each download is
// audited in the transaction that uses the token up.
import { timingSafeEqual } from 'node:crypto';
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import { digestToken } from '../kernel/digest.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { randomToken } from '../platform/ids.ts';
import { standingOf } from '../roles/index.ts';
import {
  DOWNLOAD_TOKEN_PREFIX,
  DOWNLOAD_TOKEN_TTL_SECONDS,
  downloadFormOf,
  type ResultFormat,
} from './job.states.ts';
import { resultAad } from './job-runner.ts';
import {
  findJob,
  insertDownloadToken,
  type JobRow,
  lockDownloadToken,
  lockJob,
  useDownloadToken,
} from './jobs.repo.ts';

/** Who is asking: the request's call and the permissions its session holds at realm scope. */
export interface DownloadCaller {
  call: Call;
  permissions: ReadonlySet<string>;
  /** The job types this API family serves (the account API: the personal export); null for all. */
  types?: readonly string[] | null;
}

const isRequester = (job: JobRow, c: DownloadCaller) =>
  job.requested_by_type === c.call.actor.type && job.requested_by_id === c.call.actor.id;

/** The job's permission, held now: at realm scope, or inside the job's organization for org.*. */
async function stillHolds(q: Queryable, job: JobRow, c: DownloadCaller): Promise<void> {
  const p = job.permission;
  if (p === null || c.permissions.has(p)) return;
  if (p.startsWith('org.') && job.organization_id) {
    const standing = await standingOf(q, job.realm_id, c.call.actor, job.organization_id, c.call.now);
    if (standing.permissions.has(p)) return;
  }
  throw problem.forbidden(`permission ${p} is missing`);
}

/** A result the requester may still fetch: the job succeeded with a file not yet purged. */
function requireDownloadable(job: JobRow): void {
  if (job.state !== 'succeeded' || !job.result || !job.result.format)
    throw problem.conflict('the job has no result to download');
  if (job.result_sealed === null) throw problem.conflict('the result was purged after its retention ended');
}

export async function issueDownloadToken(
  db: Db,
  c: DownloadCaller,
  jobId: string,
): Promise<{ download_token: string; expires_in: number }> {
  return db.tx(async (tx) => {
    const job = await findJob(tx, c.call.realmId, jobId);
    if (!job) throw problem.notFound('no such job');
    if (!isRequester(job, c)) {
      // Holders of realm.jobs.read see the job exists; nobody else learns it does.
      if (c.permissions.has('realm.jobs.read'))
        throw problem.forbidden('only the requester of a job can download its result');
      throw problem.notFound('no such job');
    }
    await stillHolds(tx, job, c);
    requireDownloadable(job);
    const token = `${DOWNLOAD_TOKEN_PREFIX}${randomToken(32)}`;
    const actor = c.call.actor;
    await insertDownloadToken(tx, {
      realm_id: job.realm_id,
      token_digest: digestToken(token),
      job_id: job.id,
      requester_type: actor.type,
      requester_id: actor.id ?? '',
      created_at: c.call.now,
      expires_at: new Date(c.call.now.getTime() + DOWNLOAD_TOKEN_TTL_SECONDS * 1000),
    });
    return { download_token: token, expires_in: DOWNLOAD_TOKEN_TTL_SECONDS };
  });
}

export interface JobFile {
  body: Buffer;
  contentType: string;
  filename: string;
}

const sameDigest = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Redeems a token: checks, decrypts, uses it up and audits the download, all in one transaction. */
export async function redeemDownloadToken(
  db: Db,
  keyring: RootKeyring,
  c: DownloadCaller,
  token: string,
): Promise<JobFile> {
  const invalid = () => problem.invalidRequest('the download token is invalid, expired or used');
  if (!token.startsWith(DOWNLOAD_TOKEN_PREFIX)) throw invalid();
  const digest = digestToken(token);
  return inChange(db, c.call, async (tx, record) => {
    const row = await lockDownloadToken(tx, c.call.realmId, digest);
    if (!row || !sameDigest(row.token_digest, digest)) throw invalid();
    if (row.used_at !== null || row.expires_at.getTime() <= c.call.now.getTime()) throw invalid();
    if (row.requester_type !== c.call.actor.type || row.requester_id !== c.call.actor.id)
      throw problem.forbidden('the download token was issued to someone else');
    const job = await lockJob(tx, c.call.realmId, row.job_id);
    if (!job) throw invalid();
    // A token of another API family is unknown here, and stays usable where it belongs.
    if (c.types && !c.types.includes(job.type)) throw invalid();
    await stillHolds(tx, job, c);
    requireDownloadable(job);
    const body = keyring.decrypt('job-result', job.result_sealed as string, resultAad(job.realm_id, job.id));
    await useDownloadToken(tx, c.call.realmId, digest, c.call.now);
    await record.audit('job.result.downloaded', {
      category: 'privacy',
      target: { type: 'job', id: job.id },
      ...(job.organization_id ? { orgId: job.organization_id } : {}),
      data: { job_id: job.id, job_type: job.type, sha256: job.result?.sha256 ?? null, bytes: body.length },
    });
    const form = downloadFormOf(job.result?.format as ResultFormat);
    return { body, contentType: form.contentType, filename: form.filename };
  });
}
