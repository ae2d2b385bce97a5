// Rows of the organization.delete job (doc 2, Organization deletion and Job). The jobs worker
// that runs them is not built yet; until it is, a queued job waits and the organization stays
// in the deleting state.
import { maybeOne, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';

export const findLiveDeletionJob = (tx: Tx, realmId: string, orgId: string) =>
  maybeOne<{ id: string; state: string }>(
    tx,
    `select id, state from jobs where realm_id = $1 and organization_id = $2 and type = 'organization.delete'
        and state in ('queued', 'running')`,
    [realmId, orgId],
  );

export async function queueDeletionJob(
  tx: Tx,
  realmId: string,
  orgId: string,
  requester: { type: string; id: string | null },
  now: Date,
): Promise<string> {
  const id = newId('job', now.getTime());
  await tx.query(
    `insert into jobs (realm_id, id, type, state, organization_id, requested_by_type, requested_by_id,
       created_at, updated_at)
     values ($1, $2, 'organization.delete', 'queued', $3, $4, $5, $6, $6)`,
    [realmId, id, orgId, requester.type, requester.id, now],
  );
  return id;
}

/** doc 2, Organization deletion: job results of the organization are erased when deletion starts. */
export async function eraseJobResults(tx: Tx, realmId: string, orgId: string, now: Date): Promise<void> {
  await tx.query(
    `update jobs set result = null, updated_at = $3
      where realm_id = $1 and organization_id = $2 and result is not null`,
    [realmId, orgId, now],
  );
}
