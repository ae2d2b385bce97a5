// SQL for pushed authorization requests (migration 0034): stored under the digest of their
// request_uri, taken (deleted) by the one request that uses them.
import { jsonColumn, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import type { StartInput } from './start.ts';

export interface PushedRequest {
  clientId: string;
  params: StartInput;
  expiresAt: Date;
}

export async function insertPushedRequest(
  tx: Tx,
  realmId: string,
  digest: string,
  r: PushedRequest,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into pushed_authorization_requests (realm_id, request_digest, client_id, params, expires_at, created_at)
     values ($1, $2, $3, $4, $5, $6)`,
    [realmId, digest, r.clientId, JSON.stringify(r.params), r.expiresAt, now],
  );
}

/**
 * Removes and returns the pushed request with this digest, expired or not: whoever presents it
 * spends it. A concurrent second use waits for the first and then finds nothing.
 */
export async function takePushedRequest(q: Queryable, realmId: string, digest: string) {
  const row = await maybeOne<{ client_id: string; params: unknown; expires_at: Date | string }>(
    q,
    `delete from pushed_authorization_requests where realm_id = $1 and request_digest = $2
     returning client_id, params, expires_at`,
    [realmId, digest],
  );
  if (!row) return null;
  return {
    clientId: row.client_id,
    params: jsonColumn<StartInput>(row.params),
    expiresAt: new Date(row.expires_at),
  } satisfies PushedRequest;
}

/** Deletes pushed requests that expired before `before` (sign-in cleanup). */
export async function deleteExpiredPushedRequests(
  q: Queryable,
  before: Date,
  batch: number,
): Promise<number> {
  const r = await q.query(
    `delete from pushed_authorization_requests where (realm_id, request_digest) in (
       select realm_id, request_digest from pushed_authorization_requests where expires_at < $1 limit ${batch})`,
    [before],
  );
  return r.rowCount;
}
