// The authentication-flow facts of one sign-in transaction (table signin_flow_state).
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface FlowState {
  network: string | null;
  challengePassed: boolean;
  reviewed: boolean;
}

export async function findFlowState(q: Queryable, realmId: string, txId: string): Promise<FlowState> {
  const row = await maybeOne<{ network: string | null; challenge_passed: boolean; reviewed: boolean }>(
    q,
    'select network, challenge_passed, reviewed from signin_flow_state where realm_id = $1 and transaction_id = $2',
    [realmId, txId],
  );
  return {
    network: row?.network ?? null,
    challengePassed: row?.challenge_passed ?? false,
    reviewed: row?.reviewed ?? false,
  };
}

export async function noteNetwork(q: Tx, realmId: string, txId: string, ip: string): Promise<void> {
  await q.query(
    `insert into signin_flow_state (realm_id, transaction_id, network) values ($1, $2, $3)
     on conflict (realm_id, transaction_id) do update set network = excluded.network`,
    [realmId, txId, ip],
  );
}

export async function markChallengePassed(q: Tx, realmId: string, txId: string): Promise<void> {
  await q.query(
    `insert into signin_flow_state (realm_id, transaction_id, challenge_passed) values ($1, $2, true)
     on conflict (realm_id, transaction_id) do update set challenge_passed = true`,
    [realmId, txId],
  );
}

/** True the first time only: the review signal is recorded once per transaction. */
export async function markReviewed(q: Tx, realmId: string, txId: string): Promise<boolean> {
  const r = await q.query(
    `insert into signin_flow_state (realm_id, transaction_id, reviewed) values ($1, $2, true)
     on conflict (realm_id, transaction_id) do update set reviewed = true where signin_flow_state.reviewed = false`,
    [realmId, txId],
  );
  return (r.rowCount ?? 0) > 0;
}
