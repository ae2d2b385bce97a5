// SQL for provisioning targets (migration 0057): the rows, their push lease and sweep position.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { type ClaimedItem, defineQueue } from '../platform/work-queue/work-queue.ts';

export interface TargetRow {
  realm_id: string;
  id: string;
  organization_id: string | null;
  name: string;
  base_url: string;
  credential_sealed: string;
  allow_private_network: boolean;
  push_enabled: boolean;
  state: 'active' | 'paused';
  created_at: Date;
  updated_at: Date;
  push_cursor: string | null;
  push_due_at: Date;
  push_failures: number;
  last_push_error: string | null;
  last_pushed_at: Date | null;
}

const COLUMNS = `realm_id, id, organization_id, name, base_url, credential_sealed, allow_private_network,
  push_enabled, state, created_at, updated_at, push_cursor, push_due_at, push_failures, last_push_error,
  last_pushed_at`;

export interface NewTarget {
  id: string;
  organizationId: string | null;
  name: string;
  baseUrl: string;
  credentialSealed: string;
  allowPrivateNetwork: boolean;
  pushEnabled: boolean;
}

export const insertTarget = (tx: Tx, realmId: string, t: NewTarget, now: Date) =>
  tx.query(
    `insert into provisioning_targets (realm_id, id, organization_id, name, base_url, credential_sealed,
       allow_private_network, push_enabled, state, created_at, updated_at, push_due_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, 'active', $9, $9, $9)`,
    [
      realmId,
      t.id,
      t.organizationId,
      t.name,
      t.baseUrl,
      t.credentialSealed,
      t.allowPrivateNetwork,
      t.pushEnabled,
      now,
    ],
  );

export const findTarget = (q: Queryable, realmId: string, id: string) =>
  maybeOne<TargetRow>(q, `select ${COLUMNS} from provisioning_targets where realm_id = $1 and id = $2`, [
    realmId,
    id,
  ]);

export const lockTarget = (tx: Tx, realmId: string, id: string) =>
  maybeOne<TargetRow>(
    tx,
    `select ${COLUMNS} from provisioning_targets where realm_id = $1 and id = $2 for update`,
    [realmId, id],
  );

export interface TargetChange {
  name: string;
  baseUrl: string;
  credentialSealed: string;
  allowPrivateNetwork: boolean;
  pushEnabled: boolean;
  state: 'active' | 'paused';
}

/** A change restarts the push sweep now: the destination or what it holds may differ. */
export const updateTarget = (tx: Tx, realmId: string, id: string, c: TargetChange, now: Date) =>
  tx.query(
    `update provisioning_targets set name = $3, base_url = $4, credential_sealed = $5,
       allow_private_network = $6, push_enabled = $7, state = $8, updated_at = $9,
       push_cursor = null, push_due_at = $9, push_failures = 0, last_push_error = null
     where realm_id = $1 and id = $2`,
    [realmId, id, c.name, c.baseUrl, c.credentialSealed, c.allowPrivateNetwork, c.pushEnabled, c.state, now],
  );

/** Its links go with it (on delete cascade); nothing is removed at the target. */
export const deleteTarget = (tx: Tx, realmId: string, id: string) =>
  tx.query('delete from provisioning_targets where realm_id = $1 and id = $2', [realmId, id]);

export const listTargets = (
  q: Queryable,
  realmId: string,
  organizationId: string | null,
  page: { after: string | null; limit: number },
) =>
  many<TargetRow>(
    q,
    `select ${COLUMNS} from provisioning_targets
      where realm_id = $1 and organization_id is not distinct from $4 and ($2::text is null or id > $2)
      order by id limit $3`,
    [realmId, page.after, page.limit + 1, organizationId],
  );

/**
 * The push sweep as a work queue: targets whose push is due, oldest due first, under a lease, at
 * most two of one tenant (organization, or the realm for realm targets) in one claim. Each run of a
 * target does a bounded slice of work and is then due again behind the others, so one realm's
 * large directory never holds back another realm's target.
 */
export const PUSH_QUEUE = defineQueue<TargetRow & ClaimedItem>({
  table: 'provisioning_targets',
  waiting: "state = 'active' and push_enabled",
  dueAt: 'push_due_at',
  fairness: { column: 'organization_id', limit: 'per_claim', unowned: 'per_realm' },
});
const TENANT_SHARE = 2;

export const claimDueTargets = (tx: Tx, holder: string, now: Date, leaseUntil: Date, limit: number) =>
  PUSH_QUEUE.claim(tx, { holder, now, leaseUntil, limit, share: TENANT_SHARE });

export interface PushRunEnd {
  cursor: string | null;
  dueAt: Date;
  failures: number;
  error: string | null;
  pushedAt: Date | null;
}

/** Ends a run only while this claim is current; answers whether it did. */
export async function endPushRun(
  tx: Tx,
  target: TargetRow & ClaimedItem,
  holder: string,
  e: PushRunEnd,
): Promise<boolean> {
  if (!(await PUSH_QUEUE.lockClaimed(tx, target, holder))) return false;
  await tx.query(
    `update provisioning_targets set push_cursor = $3, push_due_at = $4, push_failures = $5,
       last_push_error = $6, last_pushed_at = coalesce($7, last_pushed_at), attempts = 0,
       locked_by = null, locked_until = null
     where realm_id = $1 and id = $2`,
    [target.realm_id, target.id, e.cursor, e.dueAt, e.failures, e.error, e.pushedAt],
  );
  return true;
}

/** Targets whose push keeps failing (service_outbound_provisioning_failing_targets). */
export async function countFailingTargets(q: Queryable): Promise<number> {
  const r = await q.query<{ n: string }>(
    `select count(*) as n from provisioning_targets where state = 'active' and push_failures > 0`,
  );
  return Number(r.rows[0]?.n ?? 0);
}
