// Self-service account deletion (spec doc 1, Account states: active -> pending_deletion; doc 2,
// Catalog: user.deleted on self-deletion). The request ends every session and grant at once; the
// account may cancel it at its next sign-in (cancel_deletion); after privacy.deletion_grace the
// worker task users.deletion erases it. The request and a cancel emit no event of their own.
import { inChange, recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { endAccountSessions } from '../sessions/index.ts';
import { eraseAccount } from './account-erasure.ts';
import { dueDeletions, findUser, requestDeletion } from './users.repo.ts';

const subject = (id: string) => ({ type: 'user', id });

export async function requestOwnDeletion(
  db: Db,
  call: Call & { correlationId: string },
  userId: string,
  graceMs: number,
): Promise<{ state: 'pending_deletion'; deletion_due_at: string }> {
  const due = new Date(call.now.getTime() + graceMs);
  await inChange(db, call, async (tx, record) => {
    const user = await findUser(tx, call.realmId, userId);
    if (!user) throw problem.notFound('no such account');
    if (user.state !== 'active' && user.state !== 'recovery_restricted')
      throw problem.conflict(`an account in state ${user.state} cannot request its deletion`);
    await requestDeletion(tx, call.realmId, userId, due, call.now);
    const revoked = await endAccountSessions(
      tx,
      call.realmId,
      userId,
      'deletion_requested',
      call.now,
      call.correlationId,
    );
    await record.audit('user.deletion_requested', {
      category: 'identity',
      subject: subject(userId),
      data: {
        state: 'pending_deletion',
        deletion_due_at: due.toISOString(),
        sessions_revoked: revoked.sessions.length,
      },
    });
  });
  return { state: 'pending_deletion', deletion_due_at: due.toISOString() };
}

const BATCH = 100;

/** Worker task users.deletion: erases accounts whose grace period passed (user.deleted). */
export async function eraseDueAccounts(deps: { db: Db }, now: Date): Promise<TaskReport> {
  let erased = 0;
  for (const due of await dueDeletions(deps.db, now, BATCH)) {
    await deps.db.tx(async (tx) => {
      const user = await findUser(tx, due.realm_id, due.id);
      // Cancelled or already handled since the list was read.
      if (user?.state !== 'pending_deletion') return;
      const call = {
        realmId: due.realm_id,
        actor: { type: 'system' as const, id: null },
        correlationId: null,
        now,
      };
      await endAccountSessions(tx, due.realm_id, due.id, 'user_deleted', now, `deletion-${due.id}`);
      await eraseAccount(tx, due.realm_id, due.id, now);
      const record = recorder(tx, call);
      await record.audit('user.deleted', {
        category: 'identity',
        subject: subject(due.id),
        reason: 'self_service_deletion',
        data: { from: 'pending_deletion' },
      });
      await record.event('user.deleted', { user_id: due.id });
      erased++;
    });
  }
  return { erased };
}
