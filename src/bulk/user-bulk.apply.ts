// One account's share of a bulk action (docs/user-bulk.md): the same change the single-account
// route makes, in its own transaction with its audit records and events, so one refused account
// never undoes or blocks the others. A refusal becomes that account's outcome, named by the
// problem's code; an account already as asked is `unchanged`.
import { inChange } from '../audit/index.ts';
import { addMember as addGroupMember } from '../groups/index.ts';
import { addOrganizationMember, type OrgCall } from '../organizations/index.ts';
import type { Db } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import type { Delegator } from '../roles/delegator.ts';
import {
  type AdminCall,
  addAccountRequiredActionInTx,
  changeAccountStateInTx,
  deleteAccountInTx,
  revokeAccountSessionsInTx,
} from '../users/index.ts';
import type { BulkRequest } from './user-bulk.format.ts';

export type AccountOutcome =
  | { user_id: string; outcome: 'changed' | 'unchanged' }
  | { user_id: string; outcome: 'refused'; code: string; detail: string };

export interface BulkContext {
  db: Db;
  call: AdminCall;
  /** Who asked, with what they hold where the action takes effect (caps role-carrying groups). */
  requester: Delegator;
}

const STATE_OF = { suspend: 'suspend', reactivate: 'reactivate' } as const;

async function change(ctx: BulkContext, r: BulkRequest, userId: string): Promise<boolean> {
  const { db, call } = ctx;
  const reason = r.reason ?? null;
  switch (r.action) {
    case 'suspend':
    case 'reactivate': {
      const to = STATE_OF[r.action];
      await inChange(db, call, (tx, record) =>
        changeAccountStateInTx(tx, record, call, userId, to, reason ?? ''),
      );
      return true;
    }
    case 'revoke_sessions':
      await inChange(db, call, (tx, record) => revokeAccountSessionsInTx(tx, record, call, userId, reason));
      return true;
    case 'set_required_action':
      return inChange(db, call, (tx, record) =>
        addAccountRequiredActionInTx(tx, record, call, userId, r.requiredAction as string, reason),
      );
    case 'delete':
      await inChange(db, call, (tx, record) => deleteAccountInTx(tx, record, call, userId));
      return true;
    case 'add_to_group':
      await addGroupMember(db, { ...call, caller: ctx.requester }, { kind: 'realm' }, r.groupId as string, {
        type: 'user',
        id: userId,
      });
      return true;
    case 'add_to_organization': {
      const orgCall: OrgCall = { ...call, permissions: ctx.requester.permissions, caller: ctx.requester };
      await addOrganizationMember(db, orgCall, r.organizationId as string, { userId });
      return true;
    }
  }
}

/** Applies the action to one account; a refusal is the outcome, any other fault is thrown. */
export async function applyToAccount(
  ctx: BulkContext,
  r: BulkRequest,
  userId: string,
): Promise<AccountOutcome> {
  // decision D13 holds for every account of a bulk action: no administrator suspends, reactivates
  // or deletes their own account through it either.
  const selfChange = r.action === 'suspend' || r.action === 'reactivate' || r.action === 'delete';
  if (selfChange && ctx.requester.kind === 'user' && ctx.requester.id === userId) {
    return { user_id: userId, outcome: 'refused', code: 'forbidden', detail: "the requester's own account" };
  }
  try {
    return { user_id: userId, outcome: (await change(ctx, r, userId)) ? 'changed' : 'unchanged' };
  } catch (e) {
    if (!(e instanceof Problem) || e.status >= 500) throw e;
    return { user_id: userId, outcome: 'refused', code: e.code, detail: e.detail ?? '' };
  }
}
