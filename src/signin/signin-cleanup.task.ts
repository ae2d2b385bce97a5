// Worker task signin.cleanup (spec doc 2, "Data lifecycle and retention" 3): transactions are
// deleted a day after they were created, once they are no longer pending or have expired, and
// the codes and links sent in them after a day, expired passkey ceremonies, authorization codes once they expired or were used
// and the session retention has passed, expired pushed authorization requests, and abuse-budget
// counters of windows that ended, and SAML assertion ids whose assertions expired.

import { deleteExpiredSamlAssertions } from '../identity-providers/index.ts';
import type { TaskReport } from '../kernel/task.ts';
import { deleteExpiredCeremonies } from '../mfa/index.ts';
import { pruneBudgets } from '../platform/abuse-budget.ts';
import type { Db } from '../platform/db/db.ts';
import { deleteExpiredDeviceAuthorizations } from './device-authorizations.repo.ts';
import { deleteExpiredPushedRequests } from './pushed-requests.repo.ts';

const DAY_MS = 24 * 3600 * 1000;
const BATCH = 1000;

export async function cleanupSignin(
  deps: { db: Db; sessionRetentionMs: number },
  now: Date,
): Promise<TaskReport> {
  const dayAgo = new Date(now.getTime() - DAY_MS);
  const transactions = await deps.db.query(
    `delete from signin_transactions where (realm_id, id) in (
       select realm_id, id from signin_transactions
        where created_at < $1 and (status <> 'pending' or expires_at < $2) limit ${BATCH})`,
    [dayAgo, now],
  );
  const codes = await deps.db.query(
    `delete from authorization_codes where (realm_id, code_digest) in (
       select realm_id, code_digest from authorization_codes
        where coalesce(consumed_at, expires_at) < $1 limit ${BATCH})`,
    [new Date(now.getTime() - deps.sessionRetentionMs)],
  );
  // SAML request states of the identity provider (migrations/0052) a day past their expiry; the
  // unique request id they hold stops refusing a replay then, long after IssueInstant went stale.
  const samlRequests = await deps.db.query(
    `delete from saml_idp_requests where (realm_id, id) in (
       select realm_id, id from saml_idp_requests where expires_at < $1 limit ${BATCH})`,
    [dayAgo],
  );
  // Codes and links sent in a transaction go with it (created a day ago at the latest).
  const challenges = await deps.db.query(
    `delete from signin_challenges where (realm_id, transaction_id, purpose) in (
       select realm_id, transaction_id, purpose from signin_challenges where created_at < $1 limit ${BATCH})`,
    [dayAgo],
  );
  // Abuse-budget windows are at most a day long (security.budgets.*_window): older rows count for
  // nothing.
  const budgets = await pruneBudgets(deps.db, dayAgo);
  // Pushed authorization requests nobody used within their 60 seconds.
  const pushed = await deleteExpiredPushedRequests(deps.db, now, BATCH);
  // Passkey ceremonies nobody answered in time.
  const ceremonies = await deleteExpiredCeremonies(deps.db, now);
  // Device authorizations a day past their expiry, decided or not (their user codes are freed).
  const devices = await deleteExpiredDeviceAuthorizations(deps.db, dayAgo, BATCH);
  // SAML assertion ids past the moment their assertions stopped being acceptable.
  const samlAssertions = await deleteExpiredSamlAssertions(deps.db, now, BATCH);
  return {
    saml_assertion_ids: samlAssertions,
    device_authorizations: devices,
    passkey_ceremonies: ceremonies,
    transactions: transactions.rowCount,
    codes: codes.rowCount,
    saml_idp_requests: samlRequests.rowCount,
    challenges: challenges.rowCount,
    pushed_requests: pushed,
    budget_counters: budgets,
  };
}
