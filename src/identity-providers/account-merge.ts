// Account merge (doc 2, Catalog: user.merged, user.deleted "merge"; Data lifecycle 4: merge records
// are kept; docs/federation.md, Merging accounts): the source account's linked identities move to
// the target keeping their ids (provenance merge), then the source is erased as an administrator's
// delete erases it, in one transaction with the merge record, the audit records and the events
// user.deleted and user.merged. This is Auth0's "link user accounts": only the identities move;
// the source's profile, credentials, memberships and roles go with the source.
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { endAccountSessions } from '../sessions/index.ts';
import { eraseAccount } from '../users/account-erasure.ts';
import { lockUser } from '../users/index.ts';
import { insertMergeRecord, moveLinks } from './linked-identities.repo.ts';

export interface MergeInput {
  sourceUserId: string;
  reason: string;
}

export interface MergeResult {
  id: string;
  userId: string;
  mergedUserId: string;
  movedIdentityIds: string[];
}

const usable = (state: string | undefined) => state !== undefined && state !== 'deleted';

export async function mergeAccounts(
  db: Db,
  call: Call & { correlationId: string },
  targetUserId: string,
  input: MergeInput,
): Promise<MergeResult> {
  if (input.sourceUserId === targetUserId)
    throw problem.validation([
      { field: 'source_user_id', code: 'same_account', detail: 'an account cannot absorb itself' },
    ]);
  // Like deleting an account, merging one away is never done to the caller's own account.
  if (call.actor.type === 'user' && call.actor.id === input.sourceUserId)
    throw problem.forbidden('administrators cannot merge their own account away');
  return inChange(db, call, async (tx, record) => {
    // Both locked in id order, so two merges of the same pair cannot deadlock.
    const [first, second] = [targetUserId, input.sourceUserId].sort();
    const locked = new Map([
      [first, await lockUser(tx, call.realmId, first as string)],
      [second, await lockUser(tx, call.realmId, second as string)],
    ]);
    const target = locked.get(targetUserId);
    const source = locked.get(input.sourceUserId);
    if (!target || !usable(target.state)) throw problem.notFound('no such user');
    if (!source || !usable(source.state))
      throw problem.validation([{ field: 'source_user_id', code: 'not_found', detail: 'no such user' }]);
    const moved = await moveLinks(tx, call.realmId, source.id, target.id, call.now);
    const revoked = await endAccountSessions(
      tx,
      call.realmId,
      source.id,
      'user_merged',
      call.now,
      call.correlationId,
    );
    await eraseAccount(tx, call.realmId, source.id, call.now);
    const id = newId('mrg', call.now.getTime());
    await insertMergeRecord(
      tx,
      call.realmId,
      {
        id,
        targetUserId: target.id,
        sourceUserId: source.id,
        moved,
        actor: call.actor,
        reason: input.reason,
      },
      call.now,
    );
    await record.audit('user.deleted', {
      category: 'identity',
      subject: { type: 'user', id: source.id },
      data: { from: source.state, merged_into: target.id, sessions_revoked: revoked.sessions.length },
    });
    await record.event('user.deleted', { user_id: source.id });
    await record.audit('user.merged', {
      category: 'identity',
      subject: { type: 'user', id: target.id },
      target: { type: 'user', id: source.id },
      reason: input.reason,
      data: { merge_id: id, moved_identity_ids: moved },
    });
    await record.event('user.merged', { user_id: target.id, merged_user_id: source.id });
    return { id, userId: target.id, mergedUserId: source.id, movedIdentityIds: moved };
  });
}
