// Support access from the customer's side (docs/support-access.md): ending a grant on one's own
// account, and the opt-out the realm policy may allow (impersonation.allow_customer_opt_out).
import { recorder } from '../audit/index.ts';
import { problem } from '../platform/http/problem.ts';
import { lockSupportGrant, setPreference } from '../support-grants/index.ts';
import { endSupportGrants } from '../support-grants/support-end.ts';
import type { SupportGrantRow } from '../support-grants/support-grant.ts';
import type { SupportDeps } from './support.deps.ts';
import { impersonationSettings } from './support-policy.ts';
import { revokeLockedGrant } from './support-revoke.ts';

export interface CustomerCall {
  realmId: string;
  userId: string;
  correlationId: string;
  now: Date;
}

export async function revokeAsCustomer(
  app: SupportDeps,
  call: CustomerCall,
  id: string,
): Promise<SupportGrantRow> {
  return app.db.tx(async (tx) => {
    const g = await lockSupportGrant(tx, call.realmId, id);
    // Grants on other accounts are as unknown as grants that do not exist.
    if (!g || g.target_user_id !== call.userId) throw problem.notFound('no such support grant');
    const actor = { type: 'user', id: call.userId } as const;
    return revokeLockedGrant(tx, call, g, { reason: 'customer', actor, subject: actor });
  });
}

/** Stores the choice; opting out ends the account's live grants at once. */
export async function setSupportAccess(
  app: SupportDeps,
  call: CustomerCall,
  allowed: boolean,
): Promise<{ allowed: boolean; grants_revoked: number }> {
  return app.db.tx(async (tx) => {
    const settings = await impersonationSettings(tx, call.realmId);
    if (!settings.allowCustomerOptOut)
      throw problem.conflict('the realm does not let account holders opt out of support access');
    // Grant creation locks the customer's row before it reads the preference; taking the same
    // lock first means a grant is either refused as opted out or committed before the ending
    // below looks for it, never created in between.
    await tx.query('select 1 from users where realm_id = $1 and id = $2 for update', [
      call.realmId,
      call.userId,
    ]);
    await setPreference(tx, call.realmId, call.userId, allowed, call.now);
    const actor = { type: 'user', id: call.userId } as const;
    const ended = allowed
      ? []
      : await endSupportGrants(
          tx,
          call.realmId,
          { targetUserId: call.userId },
          'customer_opt_out',
          actor,
          call.now,
          call.correlationId,
        );
    await recorder(tx, { ...call, actor }).audit('support.access.preference_set', {
      category: 'security',
      subject: actor,
      data: { allowed, grants_revoked: ended.length },
    });
    return { allowed, grants_revoked: ended.length };
  });
}
