// SQL of linked identities and the upstream tokens kept for them. Every statement filters on the
// realm.
import type { Queryable } from '../platform/db/db.ts';

export type Provenance = 'jit' | 'link' | 'merge' | 'federation_transfer' | 'import';

export interface LinkedIdentityRow {
  realm_id: string;
  id: string;
  user_id: string;
  provider_id: string;
  upstream_issuer: string;
  upstream_subject: string;
  provenance: Provenance;
  upstream_email: string | null;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
}

/** A linked identity with the name of its connection, as lists show it. */
export interface LinkedIdentityView extends LinkedIdentityRow {
  provider_alias: string;
  provider_display_name: string;
  provider_state: string;
}

export interface NewLink {
  id: string;
  userId: string;
  providerId: string;
  issuer: string;
  subject: string;
  provenance: Provenance;
  email: string | null;
}

export async function insertLink(
  q: Queryable,
  realmId: string,
  l: NewLink,
  now: Date,
): Promise<LinkedIdentityRow> {
  const r = await q.query<LinkedIdentityRow>(
    `insert into linked_identities (realm_id, id, user_id, provider_id, upstream_issuer, upstream_subject,
       provenance, upstream_email, created_at, updated_at, last_used_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $9) returning *`,
    [realmId, l.id, l.userId, l.providerId, l.issuer, l.subject, l.provenance, l.email, now],
  );
  return r.rows[0] as LinkedIdentityRow;
}

export async function findLinkBySubject(
  q: Queryable,
  realmId: string,
  providerId: string,
  issuer: string,
  subject: string,
): Promise<LinkedIdentityRow | null> {
  const r = await q.query<LinkedIdentityRow>(
    `select * from linked_identities
      where realm_id = $1 and provider_id = $2 and upstream_issuer = $3 and upstream_subject = $4`,
    [realmId, providerId, issuer, subject],
  );
  return r.rows[0] ?? null;
}

/** A sign-in through the link: when, and the address the upstream gave this time. */
export async function touchLink(
  q: Queryable,
  realmId: string,
  id: string,
  email: string | null,
  now: Date,
): Promise<void> {
  await q.query(
    `update linked_identities set last_used_at = $3, upstream_email = coalesce($4, upstream_email), updated_at = $3
      where realm_id = $1 and id = $2`,
    [realmId, id, now, email],
  );
}

const VIEW = `select l.*, p.alias as provider_alias, p.display_name as provider_display_name,
                     p.state as provider_state
                from linked_identities l
                join identity_providers p on p.realm_id = l.realm_id and p.id = l.provider_id`;

export async function listLinksOfUser(
  q: Queryable,
  realmId: string,
  userId: string,
): Promise<LinkedIdentityView[]> {
  const r = await q.query<LinkedIdentityView>(
    `${VIEW} where l.realm_id = $1 and l.user_id = $2 order by l.created_at, l.id`,
    [realmId, userId],
  );
  return r.rows;
}

export async function lockLinkOfUser(
  q: Queryable,
  realmId: string,
  userId: string,
  id: string,
): Promise<LinkedIdentityRow | null> {
  const r = await q.query<LinkedIdentityRow>(
    'select * from linked_identities where realm_id = $1 and user_id = $2 and id = $3 for update',
    [realmId, userId, id],
  );
  return r.rows[0] ?? null;
}

export async function deleteLink(q: Queryable, realmId: string, id: string): Promise<void> {
  await q.query('delete from linked_identities where realm_id = $1 and id = $2', [realmId, id]);
}

export async function countLinksOfConnection(
  q: Queryable,
  realmId: string,
  providerId: string,
): Promise<number> {
  const r = await q.query<{ n: string }>(
    'select count(*) as n from linked_identities where realm_id = $1 and provider_id = $2',
    [realmId, providerId],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Moves every link of one account to another, keeping their ids; returns the ids moved. */
export async function moveLinks(
  q: Queryable,
  realmId: string,
  fromUserId: string,
  toUserId: string,
  now: Date,
): Promise<string[]> {
  const r = await q.query<{ id: string }>(
    `update linked_identities set user_id = $3, provenance = 'merge', updated_at = $4
      where realm_id = $1 and user_id = $2 returning id`,
    [realmId, fromUserId, toUserId, now],
  );
  await q.query(
    'update upstream_tokens set user_id = $3, updated_at = $4 where realm_id = $1 and user_id = $2',
    [realmId, fromUserId, toUserId, now],
  );
  return r.rows.map((x) => x.id).sort();
}

export interface UpstreamTokens {
  accessTokenSealed: string | null;
  refreshTokenSealed: string | null;
  scope: string | null;
  expiresAt: Date | null;
}

export async function storeUpstreamTokens(
  q: Queryable,
  realmId: string,
  link: Pick<LinkedIdentityRow, 'id' | 'provider_id' | 'user_id'>,
  t: UpstreamTokens,
  now: Date,
): Promise<void> {
  await q.query(
    `insert into upstream_tokens (realm_id, linked_identity_id, provider_id, user_id, access_token_sealed,
       refresh_token_sealed, scope, expires_at, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     on conflict (realm_id, linked_identity_id) do update
       set provider_id = excluded.provider_id, user_id = excluded.user_id,
           access_token_sealed = excluded.access_token_sealed,
           refresh_token_sealed = coalesce(excluded.refresh_token_sealed, upstream_tokens.refresh_token_sealed),
           scope = excluded.scope, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
    [
      realmId,
      link.id,
      link.provider_id,
      link.user_id,
      t.accessTokenSealed,
      t.refreshTokenSealed,
      t.scope,
      t.expiresAt,
      now,
    ],
  );
}

export async function countUpstreamTokens(q: Queryable, realmId: string, linkId: string): Promise<number> {
  const r = await q.query<{ n: string }>(
    'select count(*) as n from upstream_tokens where realm_id = $1 and linked_identity_id = $2',
    [realmId, linkId],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** The record of a merge, kept without cleanup (doc 2, Data lifecycle 4). */
export async function insertMergeRecord(
  q: Queryable,
  realmId: string,
  m: {
    id: string;
    targetUserId: string;
    sourceUserId: string;
    moved: string[];
    actor: { type: string; id: string | null };
    reason: string;
  },
  now: Date,
): Promise<void> {
  await q.query(
    `insert into account_merges (realm_id, id, target_user_id, source_user_id, moved_identity_ids, actor_type,
       actor_id, reason, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [realmId, m.id, m.targetUserId, m.sourceUserId, m.moved, m.actor.type, m.actor.id, m.reason, now],
  );
}

/** The account signs in through at least one link of an active connection. */
export async function hasActiveLink(q: Queryable, realmId: string, userId: string): Promise<boolean> {
  const r = await q.query(
    `select 1 from linked_identities l join identity_providers p on p.realm_id = l.realm_id and p.id = l.provider_id
      where l.realm_id = $1 and l.user_id = $2 and p.state = 'active' limit 1`,
    [realmId, userId],
  );
  return r.rows.length > 0;
}
