// What a password change does to the account's other sessions (realm policy
// password.revoke_sessions_on_change, default true): they end, each with a session.revoked event
// (reason password_changed), while the session that made the change, if any, stays. One rule for
// the self-service change (POST /me/password) and the sign-in's update_password; a self-service
// reset and an administrator's new password end everything instead (account-wide revocation).
import type { Recorder } from '../audit/index.ts';
import type { Tx } from '../platform/db/db.ts';
import { policyValue, type RealmPolicy } from '../realms/index.ts';
import { revokeOtherSessions } from '../sessions/index.ts';

/** Ends the other sessions unless the realm keeps them; returns the ids of those it ended. */
export async function endSessionsAfterPasswordChange(
  q: Tx,
  rec: Recorder,
  policy: RealmPolicy,
  change: { realmId: string; userId: string; keepSessionId: string | null; now: Date },
): Promise<string[]> {
  if (policyValue(policy, 'password', 'revoke_sessions_on_change') === false) return [];
  const { realmId, userId, keepSessionId, now } = change;
  const ended = await revokeOtherSessions(q, realmId, userId, keepSessionId, 'password_changed', now);
  for (const sessionId of ended)
    await rec.event('session.revoked', {
      user_id: userId,
      session_id: sessionId,
      reason: 'password_changed',
    });
  return ended;
}
