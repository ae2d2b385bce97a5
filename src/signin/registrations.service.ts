// Administrator decisions on registrations held for approval (registration.mode approval): approve
// lets the account finish signing in; deny suspends it (spec doc 2, Catalog: user.suspended covers
// a denied registration) and ends whatever it holds.
import type { Actor } from '../audit/audit.types.ts';
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { endAccountSessions } from '../sessions/index.ts';
import { setUserState } from '../users/index.ts';
import { decideRegistration, listPendingRegistrations } from './registration.repo.ts';

export interface DecisionCall extends Call {
  correlationId: string;
  actor: Actor;
}

export async function decidePendingRegistration(
  db: Db,
  call: DecisionCall,
  userId: string,
  decision: 'approved' | 'denied',
): Promise<{ user_id: string; state: 'approved' | 'denied' }> {
  return inChange(db, call, async (tx, record) => {
    const decided = await decideRegistration(tx, call.realmId, userId, decision, call.actor.id, call.now);
    if (!decided) throw problem.notFound('no registration of this account waits for approval');
    const subject = { type: 'user', id: userId };
    if (decision === 'approved') {
      await record.audit('user.registration_approved', { category: 'identity', subject, data: {} });
    } else {
      await setUserState(tx, call.realmId, userId, 'suspended', call.now);
      await endAccountSessions(tx, call.realmId, userId, 'registration_denied', call.now, call.correlationId);
      await record.audit('user.registration_denied', {
        category: 'identity',
        subject,
        data: { state: 'suspended' },
      });
      await record.event('user.suspended', { user_id: userId, state: 'suspended' });
    }
    return { user_id: userId, state: decision };
  });
}

export const pendingRegistrations = (db: Db, realmId: string, limit: number) =>
  listPendingRegistrations(db, realmId, limit);
