// A sign-in step's reads folded into statements it runs anyway (issue 37, statements per sign-in):
// the locked transaction row brings the client and the realm policy along, and the unlocked read
// before a password proof brings the account's password verifier.
import type { ClientRow } from '../clients/index.ts';
import { clientRowJsonSql, clientRowOfJson } from '../clients/index.ts';
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { policyJsonSql, policyOfJson } from '../realms/index.ts';
import type { PasswordVerifier } from '../users/index.ts';
import { fromRow, SELECT, type StoredTx, type TxRow } from './signin.repo.ts';

export interface LockedStep {
  stored: StoredTx;
  /** Null when the transaction's client no longer exists. */
  client: ClientRow | null;
  policy: RealmPolicy;
}

const LOCK_WITH_CONTEXT_SQL = `select t.*, ${clientRowJsonSql('t.realm_id', 't.client_id')} as step_client,
    ${policyJsonSql('t.realm_id')} as step_policy
   from signin_transactions t where t.realm_id = $1 and t.id = $2 for update of t`;

/** Locks the transaction row (signin.repo.ts lockTransaction) and reads its client and policy with it. */
export async function lockStep(q: Tx, realmId: string, id: string): Promise<LockedStep | null> {
  const row = await maybeOne<TxRow & { step_client: unknown; step_policy: unknown }>(
    q,
    LOCK_WITH_CONTEXT_SQL,
    [realmId, id],
  );
  if (!row) return null;
  return {
    stored: fromRow(row),
    client: clientRowOfJson(row.step_client),
    policy: policyOfJson(realmId, row.step_policy),
  };
}

export interface Snapshot {
  stored: StoredTx;
  /** Read when the step asked for it: the verifier of the transaction's account, if any. */
  passwordVerifier?: PasswordVerifier | null;
}

const WITH_VERIFIER_SQL = `select t.*, pc.hash as pw_hash, pc.pepper_version as pw_pepper_version
   from signin_transactions t
   left join password_credentials pc on pc.realm_id = t.realm_id and pc.user_id = t.user_id
  where t.realm_id = $1 and t.id = $2`;

/** The unlocked read before budgets and proofs; `verifier` adds the account's password verifier. */
export async function snapshotStep(
  q: Queryable,
  realmId: string,
  id: string,
  verifier: boolean,
): Promise<Snapshot | null> {
  if (!verifier) {
    const row = await maybeOne<TxRow>(q, SELECT, [realmId, id]);
    return row ? { stored: fromRow(row) } : null;
  }
  const row = await maybeOne<TxRow & { pw_hash: string | null; pw_pepper_version: number | null }>(
    q,
    WITH_VERIFIER_SQL,
    [realmId, id],
  );
  if (!row) return null;
  return {
    stored: fromRow(row),
    passwordVerifier:
      row.pw_hash === null
        ? null
        : {
            hash: row.pw_hash,
            pepperVersion: row.pw_pepper_version === null ? null : Number(row.pw_pepper_version),
          },
  };
}
