// Access review campaigns (docs/access-reviews.md): created with a snapshot of the access under
// review, decided item by item by the named reviewers, closed at their end (or earlier by an
// administrator) by task access_reviews.close, which applies them (access-reviews.close.ts). The
// limits are document 2's (Limits, "Access reviews"); the rest follows what Entra ID access
// reviews and Okta access certifications do (docs/decisions.md).
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import { findOrganization } from '../organizations/index.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { findLiveUser, getRole } from '../roles/index.ts';
import type { NewReview } from './access-reviews.decode.ts';
import {
  countScope,
  type Decision,
  findReview,
  insertReview,
  lockItem,
  lockReview,
  type ReviewRow,
  setDecision,
  setReviewState,
  snapshotItems,
} from './access-reviews.repo.ts';

export const MAX_REVIEW_ITEMS = 10_000;
/** The longest a campaign may run (ours: a quarterly review with slack). */
export const MAX_REVIEW_DAYS = 180;

const target = (r: Pick<ReviewRow, 'id'>) => ({ type: 'access_review', id: r.id });

export async function createReview(db: Db, call: Call, input: NewReview): Promise<ReviewRow> {
  const endsAt = new Date(input.endsAt);
  const span = endsAt.getTime() - call.now.getTime();
  if (span <= 0 || span > MAX_REVIEW_DAYS * 86_400_000)
    throw problem.validation([
      {
        field: 'ends_at',
        code: 'out_of_range',
        detail: `in the future, at most ${MAX_REVIEW_DAYS} days ahead`,
      },
    ]);
  return inChange(db, call, async (tx, record) => {
    if (input.scope.type === 'role') {
      const role = await getRole(tx, call.realmId, { kind: 'realm' }, input.scope.id);
      if (role.organization_id !== null) throw problem.notFound('no such role');
    } else {
      const org = await findOrganization(tx, call.realmId, input.scope.id);
      if (!org || org.state === 'deleted') throw problem.notFound('no such organization');
    }
    for (const [i, id] of input.reviewerIds.entries())
      if (!(await findLiveUser(tx, call.realmId, id)))
        throw problem.validation([
          { field: `reviewer_ids[${i}]`, code: 'not_found', detail: 'no such active user' },
        ]);
    const n = await countScope(tx, call.realmId, input.scope.type, input.scope.id);
    if (n > MAX_REVIEW_ITEMS)
      throw problem.validation([
        {
          field: 'scope',
          code: 'too_many',
          detail: `a campaign reviews at most ${MAX_REVIEW_ITEMS} assignments; this scope has ${n}`,
        },
      ]);
    const id = newId('arv', call.now.getTime());
    await insertReview(tx, call.realmId, {
      id,
      name: input.name,
      scope_type: input.scope.type,
      scope_id: input.scope.id,
      reviewer_ids: input.reviewerIds,
      default_decision: input.defaultDecision,
      ends_at: endsAt,
      created_by_type: call.actor.type,
      created_by_id: call.actor.id,
      created_at: call.now,
    });
    const items = await snapshotItems(tx, call.realmId, {
      id,
      scope_type: input.scope.type,
      scope_id: input.scope.id,
    });
    await record.audit('access_review.created', {
      category: 'security',
      target: { type: 'access_review', id },
      data: {
        name: input.name,
        scope_type: input.scope.type,
        scope_id: input.scope.id,
        reviewer_ids: input.reviewerIds,
        default_decision: input.defaultDecision,
        ends_at: endsAt.toISOString(),
        items,
      },
    });
    return (await findReview(tx, call.realmId, id)) as ReviewRow;
  });
}

/** A named reviewer decides one item of an open campaign; never their own access. */
export async function decideItem(
  db: Db,
  call: Call,
  reviewId: string,
  targetId: string,
  d: { decision: Decision; reason: string | null },
): Promise<void> {
  const reviewer = call.actor.id;
  await inChange(db, call, async (tx, record) => {
    const r = await lockReview(tx, call.realmId, reviewId);
    if (!r) throw problem.notFound('no such access review');
    if (call.actor.type !== 'user' || reviewer === null || !r.reviewer_ids.includes(reviewer))
      throw problem.forbidden('only the reviewers of this campaign decide its items');
    if (r.state !== 'open' || r.ends_at.getTime() <= call.now.getTime())
      throw problem.conflict('the access review is closed');
    const item = await lockItem(tx, call.realmId, reviewId, targetId);
    if (!item) throw problem.notFound('no such item in this access review');
    if (item.user_id === reviewer) throw problem.forbidden('a reviewer does not decide their own access');
    await setDecision(tx, call.realmId, reviewId, targetId, { ...d, by: reviewer }, call.now);
    await record.audit('access_review.decided', {
      category: 'security',
      target: target(r),
      subject: { type: 'user', id: item.user_id },
      reason: d.reason,
      data: { item_id: targetId, decision: d.decision, previous: item.decision },
    });
  });
}

/** Ends an open campaign before its time: the close task applies it at its next run. */
export async function requestClose(db: Db, call: Call, reviewId: string): Promise<ReviewRow> {
  return inChange(db, call, async (tx) => {
    const r = await lockReview(tx, call.realmId, reviewId);
    if (!r) throw problem.notFound('no such access review');
    if (r.state === 'closed') throw problem.conflict('the access review is already closed');
    await setReviewState(tx, call.realmId, reviewId, 'closing');
    return { ...r, state: 'closing' };
  });
}

/** Who may read a campaign: its managers, and its reviewers. */
export async function readableReview(
  db: Db,
  realmId: string,
  id: string,
  reader: { id: string; manages: boolean },
): Promise<ReviewRow> {
  const r = await findReview(db, realmId, id);
  if (!r || (!reader.manages && !r.reviewer_ids.includes(reader.id)))
    throw problem.notFound('no such access review');
  return r;
}
