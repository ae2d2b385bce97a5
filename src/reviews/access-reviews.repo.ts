// SQL for access reviews (migration 0054): campaigns and the items they snapshot.
import { jsonColumn, many, maybeOne, one, type Queryable, type Tx } from '../platform/db/db.ts';

export type ReviewState = 'open' | 'closing' | 'closed';
export type Decision = 'keep' | 'remove';

export interface ReviewRow {
  id: string;
  name: string;
  scope_type: 'role' | 'organization';
  scope_id: string;
  reviewer_ids: string[];
  default_decision: Decision;
  state: ReviewState;
  ends_at: Date;
  created_by_type: string;
  created_by_id: string | null;
  created_at: Date;
  closed_at: Date | null;
  result: Record<string, number> | null;
  items: number;
  decided: number;
}

export interface ItemRow {
  target_id: string;
  user_id: string;
  decision: Decision | null;
  decided_by: string | null;
  decided_at: Date | null;
  reason: string | null;
  outcome: string | null;
}

const REVIEW = `select r.id, r.name, r.scope_type, r.scope_id, r.reviewer_ids, r.default_decision, r.state,
    r.ends_at, r.created_by_type, r.created_by_id, r.created_at, r.closed_at, r.result,
    (select count(*)::int from access_review_items i where i.realm_id = r.realm_id and i.review_id = r.id) as items,
    (select count(*)::int from access_review_items i
      where i.realm_id = r.realm_id and i.review_id = r.id and i.decision is not null) as decided
  from access_reviews r`;

const parsed = (r: ReviewRow | null): ReviewRow | null => {
  if (r) r.result = r.result === null ? null : jsonColumn(r.result);
  return r;
};

export async function insertReview(
  tx: Tx,
  realmId: string,
  r: Omit<ReviewRow, 'state' | 'closed_at' | 'result' | 'items' | 'decided'>,
): Promise<void> {
  await tx.query(
    `insert into access_reviews (realm_id, id, name, scope_type, scope_id, reviewer_ids, default_decision, state,
       ends_at, created_by_type, created_by_id, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, 'open', $8, $9, $10, $11)`,
    [
      realmId,
      r.id,
      r.name,
      r.scope_type,
      r.scope_id,
      r.reviewer_ids,
      r.default_decision,
      r.ends_at,
      r.created_by_type,
      r.created_by_id,
      r.created_at,
    ],
  );
}

/**
 * Snapshots what the campaign reviews: users' realm-scope assignments of the role (not those held
 * through a membership), or the organization's live memberships. Answers how many were taken.
 */
export async function snapshotItems(
  tx: Tx,
  realmId: string,
  r: Pick<ReviewRow, 'id' | 'scope_type' | 'scope_id'>,
) {
  const source =
    r.scope_type === 'role'
      ? `select id, subject_id from role_assignments
          where realm_id = $1 and role_id = $3 and subject_type = 'user' and scope_type = 'realm'
            and membership_id is null`
      : `select id, user_id from memberships
          where realm_id = $1 and organization_id = $3 and state in ('active', 'suspended')`;
  const res = await tx.query(
    `insert into access_review_items (realm_id, review_id, target_id, user_id)
     select $1, $2, s.* from (${source}) s`,
    [realmId, r.id, r.scope_id],
  );
  return res.rowCount ?? 0;
}

/** How many items the scope would give, counted before a snapshot. */
export async function countScope(q: Queryable, realmId: string, scopeType: string, scopeId: string) {
  const sql =
    scopeType === 'role'
      ? `select count(*)::int as n from role_assignments where realm_id = $1 and role_id = $2
          and subject_type = 'user' and scope_type = 'realm' and membership_id is null`
      : `select count(*)::int as n from memberships where realm_id = $1 and organization_id = $2
          and state in ('active', 'suspended')`;
  return (await one<{ n: number }>(q, sql, [realmId, scopeId])).n;
}

export const findReview = async (q: Queryable, realmId: string, id: string) =>
  parsed(await maybeOne<ReviewRow>(q, `${REVIEW} where r.realm_id = $1 and r.id = $2`, [realmId, id]));

export const lockReview = async (tx: Tx, realmId: string, id: string) =>
  parsed(
    await maybeOne<ReviewRow>(
      tx,
      `${REVIEW} where r.realm_id = $1 and r.id = (select id from access_reviews
         where realm_id = $1 and id = $2 for update)`,
      [realmId, id],
    ),
  );

export const listReviews = async (
  q: Queryable,
  realmId: string,
  page: { after: string | null; limit: number },
) =>
  (
    await many<ReviewRow>(
      q,
      `${REVIEW} where r.realm_id = $1 and ($2::text is null or r.id > $2) order by r.id limit $3`,
      [realmId, page.after, page.limit + 1],
    )
  ).map((r) => parsed(r) as ReviewRow);

/** A page of items, each with its target as `id` (the key pages are cut by). */
export const listItems = (
  q: Queryable,
  realmId: string,
  reviewId: string,
  page: { after: string | null; limit: number },
) =>
  many<ItemRow & { id: string }>(
    q,
    `select target_id as id, target_id, user_id, decision, decided_by, decided_at, reason, outcome from access_review_items
      where realm_id = $1 and review_id = $2 and ($3::text is null or target_id > $3)
      order by target_id limit $4`,
    [realmId, reviewId, page.after, page.limit + 1],
  );

export const lockItem = (tx: Tx, realmId: string, reviewId: string, targetId: string) =>
  maybeOne<ItemRow>(
    tx,
    `select target_id, user_id, decision, decided_by, decided_at, reason, outcome from access_review_items
      where realm_id = $1 and review_id = $2 and target_id = $3 for update`,
    [realmId, reviewId, targetId],
  );

export const setDecision = (
  tx: Tx,
  realmId: string,
  reviewId: string,
  targetId: string,
  d: { decision: Decision; by: string; reason: string | null },
  now: Date,
) =>
  tx.query(
    `update access_review_items set decision = $4, decided_by = $5, reason = $6, decided_at = $7
      where realm_id = $1 and review_id = $2 and target_id = $3`,
    [realmId, reviewId, targetId, d.decision, d.by, d.reason, now],
  );

/** Items the close has not handled yet, a batch at a time. */
export const pendingItems = (tx: Queryable, realmId: string, reviewId: string, limit: number) =>
  many<ItemRow>(
    tx,
    `select target_id, user_id, decision, decided_by, decided_at, reason, outcome from access_review_items
      where realm_id = $1 and review_id = $2 and outcome is null order by target_id limit $3`,
    [realmId, reviewId, limit],
  );

export const setOutcome = (
  q: Queryable,
  realmId: string,
  reviewId: string,
  targetId: string,
  outcome: string,
) =>
  q.query(
    `update access_review_items set outcome = $4 where realm_id = $1 and review_id = $2 and target_id = $3`,
    [realmId, reviewId, targetId, outcome],
  );

export const setReviewState = (tx: Tx, realmId: string, id: string, state: ReviewState) =>
  tx.query('update access_reviews set state = $3 where realm_id = $1 and id = $2', [realmId, id, state]);

export const closeReview = (tx: Tx, realmId: string, id: string, result: Record<string, number>, now: Date) =>
  tx.query(
    `update access_reviews set state = 'closed', closed_at = $4, result = $3::jsonb where realm_id = $1 and id = $2`,
    [realmId, id, JSON.stringify(result), now],
  );

/** Campaigns to close now (past their end, or closed early), oldest end first. */
export const dueReviews = (q: Queryable, now: Date, limit: number) =>
  many<{ realm_id: string; id: string }>(
    q,
    `select realm_id, id from access_reviews
      where state <> 'closed' and (state = 'closing' or ends_at <= $1)
      order by ends_at, id limit $2`,
    [now, limit],
  );

/** Counts of outcomes, for the closed campaign's result. */
export const outcomeCounts = async (q: Queryable, realmId: string, reviewId: string) =>
  Object.fromEntries(
    (
      await many<{ outcome: string; n: number }>(
        q,
        `select outcome, count(*)::int as n from access_review_items
          where realm_id = $1 and review_id = $2 group by outcome order by outcome`,
        [realmId, reviewId],
      )
    ).map((r) => [r.outcome, r.n]),
  ) as Record<string, number>;
