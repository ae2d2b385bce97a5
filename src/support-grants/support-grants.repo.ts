// SQL of support grants and support-access preferences (migration 0010). Every statement filters
// on realm_id; grants are read with their resource's audience.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import type { EndReason, SupportGrantRow } from './support-grant.ts';

const COLUMNS = `g.id, g.state, g.actor_user_id, g.target_user_id, g.client_id, g.resource_id, r.audience,
  g.organization_id, g.scopes, g.write, g.reason, g.handoff_expires_at, g.handoff_used_at, g.expires_at,
  g.created_at, g.revoked_at, g.revoked_reason`;
const FROM = 'support_grants g join resources r on r.realm_id = g.realm_id and r.id = g.resource_id';

export interface NewSupportGrant {
  realmId: string;
  id: string;
  actorUserId: string;
  targetUserId: string;
  clientId: string;
  resourceId: string;
  organizationId: string | null;
  scopes: string[];
  write: boolean;
  reason: string;
  handoffDigest: string;
  handoffExpiresAt: Date;
  expiresAt: Date;
}

export async function insertSupportGrant(tx: Tx, g: NewSupportGrant, now: Date): Promise<void> {
  await tx.query(
    `insert into support_grants (realm_id, id, state, actor_user_id, target_user_id, client_id, resource_id,
       organization_id, scopes, write, reason, handoff_digest, handoff_expires_at, expires_at, created_at)
     values ($1, $2, 'active', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      g.realmId,
      g.id,
      g.actorUserId,
      g.targetUserId,
      g.clientId,
      g.resourceId,
      g.organizationId,
      g.scopes,
      g.write,
      g.reason,
      g.handoffDigest,
      g.handoffExpiresAt,
      g.expiresAt,
      now,
    ],
  );
}

export const findSupportGrant = (q: Queryable, realmId: string, id: string) =>
  maybeOne<SupportGrantRow>(q, `select ${COLUMNS} from ${FROM} where g.realm_id = $1 and g.id = $2`, [
    realmId,
    id,
  ]);

export const lockSupportGrant = (tx: Tx, realmId: string, id: string) =>
  maybeOne<SupportGrantRow>(
    tx,
    `select ${COLUMNS} from ${FROM} where g.realm_id = $1 and g.id = $2 for update of g`,
    [realmId, id],
  );

/** The grant a handoff code belongs to, locked; the digest is the unique lookup key. */
export const lockGrantByHandoff = (tx: Tx, realmId: string, digest: string) =>
  maybeOne<SupportGrantRow>(
    tx,
    `select ${COLUMNS} from ${FROM} where g.realm_id = $1 and g.handoff_digest = $2 for update of g`,
    [realmId, digest],
  );

export async function markHandoffUsed(tx: Tx, realmId: string, id: string, now: Date): Promise<void> {
  await tx.query('update support_grants set handoff_used_at = $3 where realm_id = $1 and id = $2', [
    realmId,
    id,
    now,
  ]);
}

export interface ListFilter {
  actorUserId?: string;
  targetUserId?: string;
  after: string | null;
  limit: number;
}

/** One keyset page in id order (ids are ULIDs, so creation order), fetched with one extra row. */
export const listSupportGrants = (q: Queryable, realmId: string, f: ListFilter) =>
  many<SupportGrantRow>(
    q,
    `select ${COLUMNS} from ${FROM}
      where g.realm_id = $1 and ($2::text is null or g.actor_user_id = $2) and ($3::text is null or g.target_user_id = $3)
        and ($4::text is null or g.id > $4)
      order by g.id limit $5`,
    [realmId, f.actorUserId ?? null, f.targetUserId ?? null, f.after, f.limit + 1],
  );

/** Grants on one account that are active or ended within `since` (the customer's own view). */
export const listGrantsOnAccount = (q: Queryable, realmId: string, userId: string, since: Date) =>
  many<SupportGrantRow>(
    q,
    `select ${COLUMNS} from ${FROM}
      where g.realm_id = $1 and g.target_user_id = $2 and (g.state = 'active' or g.revoked_at >= $3 or g.expires_at >= $3)
      order by g.id desc limit 100`,
    [realmId, userId, since],
  );

export interface EndedGrant {
  id: string;
  organization_id: string | null;
  target_user_id: string;
  actor_user_id: string;
}

/** Which grants to end: one by id, every one on an account, or every one a support user holds. */
export type GrantSelector = { id: string } | { targetUserId: string } | { actorUserId: string };

const selectorOf = (w: GrantSelector): [column: string, value: string] =>
  'id' in w
    ? ['id', w.id]
    : 'targetUserId' in w
      ? ['target_user_id', w.targetUserId]
      : ['actor_user_id', w.actorUserId];

/**
 * Ends grants that are still active and unexpired, as the selector names them. Expired grants are
 * left as they are (expiry emits nothing, doc 2).
 */
export function revokeSupportGrants(
  tx: Tx,
  realmId: string,
  which: GrantSelector,
  reason: EndReason,
  by: { type: string; id: string | null },
  now: Date,
): Promise<EndedGrant[]> {
  const [column, value] = selectorOf(which);
  return many<EndedGrant>(
    tx,
    `update support_grants set state = 'revoked', revoked_at = $3, revoked_reason = $4, revoked_by_type = $5,
       revoked_by_id = $6
      where realm_id = $1 and ${column} = $2 and state = 'active' and expires_at > $3
      returning id, organization_id, target_user_id, actor_user_id`,
    [realmId, value, now, reason, by.type, by.id],
  );
}

/** The customer's stored choice; null: none stored (the default applies). */
export async function findPreference(q: Queryable, realmId: string, userId: string): Promise<boolean | null> {
  const r = await maybeOne<{ allowed: boolean }>(
    q,
    'select allowed from support_access_preferences where realm_id = $1 and user_id = $2',
    [realmId, userId],
  );
  return r ? r.allowed : null;
}

export async function setPreference(
  tx: Tx,
  realmId: string,
  userId: string,
  allowed: boolean,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into support_access_preferences (realm_id, user_id, allowed, updated_at) values ($1, $2, $3, $4)
     on conflict (realm_id, user_id) do update set allowed = excluded.allowed, updated_at = excluded.updated_at`,
    [realmId, userId, allowed, now],
  );
}
