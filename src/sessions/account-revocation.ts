// Account-wide revocation as a use case (document 2, Revocation exposure): every session, grant,
// refresh family, opaque token and support grant of one account ends in the caller's transaction,
// with a session.revoked event for each session. Sessions own it; account state changes in users/
// and "log out everywhere" under /me both call it (docs/architecture.md, knot decisions).
import { addEvent } from '../events/index.ts';
import type { Queryable, Tx } from '../platform/db/db.ts';
import { type AccountRevocation, accountRevokedBefore, revokeAccount } from './grants.repo.ts';

/**
 * The account-wide revocation (doc 2, Revocation exposure), with a session.revoked event for every
 * session it ended.
 */
export async function endAccountSessions(
  tx: Tx,
  realmId: string,
  userId: string,
  reason: string,
  now: Date,
  correlationId: string,
): Promise<AccountRevocation> {
  const revoked = await revokeAccount(tx, realmId, userId, reason, now, correlationId);
  for (const sessionId of revoked.sessions) {
    await addEvent(tx, {
      realmId,
      type: 'session.revoked',
      occurredAt: now,
      correlationId,
      data: { user_id: userId, session_id: sessionId, reason },
    });
  }
  return revoked;
}

/**
 * The first instant at which tokens issued to the account are live. The revocation record keeps
 * whole seconds, and a token issued in the second it names is revoked with it (liveness judges
 * `iat <= revoked_before`), so after an account-wide revocation in the current second new tokens
 * are live only from the next whole second. A flow that gives the account new tokens waits until
 * then, outside its database transaction, before handing them out.
 */
export async function newTokensLiveFrom(
  q: Queryable,
  realmId: string,
  userId: string,
  now: Date,
): Promise<Date> {
  return tokensLiveFromRevocation(await accountRevokedBefore(q, realmId, userId), now);
}

/** newTokensLiveFrom for a revocation record read already (null: the account has none). */
export function tokensLiveFromRevocation(revokedBefore: Date | null, now: Date): Date {
  if (revokedBefore === null) return now;
  const nextSecond = new Date((Math.floor(revokedBefore.getTime() / 1000) + 1) * 1000);
  return nextSecond > now ? nextSecond : now;
}
