// Queuing a job from a request (spec doc 2, Jobs and exports): inside the request's own
// transaction, so the job exists exactly when the change that asked for it commits, and with the
// Idempotency-Key rule: a retry with the same key returns the job the first request queued.
import { createHash } from 'node:crypto';
import type { Actor } from '../kernel/call.ts';
import type { Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { JobType, JobTypeName } from './job-type.ts';
import { findJobByIdempotencyKey, insertJob } from './jobs.repo.ts';

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The Idempotency-Key header: absent is null; 1..255 printable ASCII characters without spaces
 * (what clients generate: UUIDs, ULIDs, hashes); anything else is 400.
 */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | null {
  const raw = headers['idempotency-key'];
  if (raw === undefined) return null;
  if (Array.isArray(raw) || !KEY.test(raw))
    throw problem.invalidRequest('Idempotency-Key must be 1 to 255 printable ASCII characters');
  return raw;
}

export interface JobRequest {
  realmId: string;
  requester: Actor;
  now: Date;
  organizationId?: string | null;
  /** What the job works on; part of what a retried request must repeat. */
  params?: Record<string, unknown>;
  idempotencyKey: string | null;
}

/** Canonical JSON (sorted members), so equal requests fingerprint equally. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

const fingerprintOf = (type: string, orgId: string | null, params: Record<string, unknown>) =>
  createHash('sha256')
    .update(canonical({ type, organization: orgId, params }))
    .digest('hex');

export interface QueuedJob {
  id: string;
  /** True when the key named a job queued by an earlier request, which is answered again. */
  replayed: boolean;
}

/** The job the requester queued earlier under this key, if any; 409 when it asked for something else. */
export async function replayedJob(tx: Tx, type: JobTypeName, r: JobRequest): Promise<QueuedJob | null> {
  if (r.idempotencyKey === null) return null;
  const earlier = await findJobByIdempotencyKey(tx, r.realmId, r.requester, r.idempotencyKey);
  if (!earlier) return null;
  if (earlier.request_fingerprint !== fingerprintOf(type, r.organizationId ?? null, r.params ?? {}))
    throw problem.conflict('this Idempotency-Key was used for a different request');
  return { id: earlier.id, replayed: true };
}

/** Queues a job of `type` in the request's transaction, or answers the job its key already names. */
export async function queueJob<D>(tx: Tx, type: JobType<D>, r: JobRequest): Promise<QueuedJob> {
  const earlier = await replayedJob(tx, type.name, r);
  if (earlier) return earlier;
  const orgId = r.organizationId ?? null;
  const params = r.params ?? {};
  const id = await insertJob(
    tx,
    {
      realmId: r.realmId,
      id: newId('job', r.now.getTime()),
      type: type.name,
      organizationId: orgId,
      requester: r.requester,
      permission: type.permission,
      params,
      idempotencyKey: r.idempotencyKey,
      fingerprint: fingerprintOf(type.name, orgId, params),
    },
    r.now,
  );
  if (id) return { id, replayed: false };
  // A concurrent request with the same key committed first: answer its job.
  const raced = await replayedJob(tx, type.name, r);
  if (!raced) throw new Error('idempotency key conflict without a job');
  return raced;
}
