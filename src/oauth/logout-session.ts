// Ending one session at a logout (RP-initiated, or a SAML LogoutRequest: docs/saml-idp.md), with
// its `user.logged_out` audit record, in the caller's transaction. A logout writes no event of its
// own (document 2, Events).
import { recordAudit } from '../audit/index.ts';
import type { Tx } from '../platform/db/db.ts';
import { revokeSession } from '../sessions/index.ts';

/** Ends the session; false when it had already ended (nothing is recorded then). */
export async function endLoggedOutSession(
  tx: Tx,
  realmId: string,
  session: { id: string; userId: string },
  via: Record<string, unknown>,
  correlationId: string,
  now: Date,
): Promise<boolean> {
  if (!(await revokeSession(tx, realmId, session.id, 'logout', now))) return false;
  await recordAudit(
    tx,
    {
      realmId,
      type: 'user.logged_out',
      category: 'security',
      actor: { type: 'user', id: session.userId },
      subject: { type: 'user', id: session.userId },
      target: { type: 'session', id: session.id },
      correlationId,
      data: via,
    },
    now,
  );
  return true;
}
