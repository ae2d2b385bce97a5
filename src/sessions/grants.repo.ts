// Users' grants to clients (one live grant per user, client and organization) and the
// account-wide revocation record (spec doc 2, Revocation exposure).
import type { Companion } from '../platform/db/companions.ts';
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { endSupportGrants } from '../support-grants/support-end.ts';

export interface GrantRow {
  id: string;
  user_id: string;
  client_id: string;
  org_id: string | null;
  scopes: string[];
  resources: string[];
}

const GRANT_COLUMNS = 'id, user_id, client_id, org_id, scopes, resources';

export interface GrantUpsert {
  realmId: string;
  userId: string;
  clientId: string;
  orgId?: string | null;
  scopes: string[];
  resources: string[];
}

/**
 * upsertGrant as one statement, for a caller joining it to other writes: a new grant, or the live
 * one (unique index oauth_grants_live, migration 0007) widened by the union of its scopes and
 * resources with these, in first-seen order. Its rows: the grant.
 */
export const grantUpsert = (g: GrantUpsert, now: Date): Companion => ({
  sql: `insert into oauth_grants as o (realm_id, id, user_id, client_id, org_id, scopes, resources, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     on conflict (realm_id, user_id, client_id, coalesce(org_id, '')) where revoked_at is null do update set
       scopes = array(select x from unnest(o.scopes || excluded.scopes) with ordinality u(x, n)
                       group by x order by min(n)),
       resources = array(select x from unnest(o.resources || excluded.resources) with ordinality u(x, n)
                          group by x order by min(n)),
       updated_at = excluded.updated_at
     returning ${GRANT_COLUMNS}`,
  params: [
    g.realmId,
    newId('grt', now.getTime()),
    g.userId,
    g.clientId,
    g.orgId ?? null,
    g.scopes,
    g.resources,
    now,
  ],
});

/**
 * The live grant of a user to a client, widened by what this sign-in granted. A sign-in to an
 * organization has a grant of its own (null: no organization), so revoking what a user holds in
 * one organization leaves the others alone.
 */
export async function upsertGrant(tx: Tx, g: GrantUpsert, now: Date): Promise<GrantRow> {
  const upsert = grantUpsert(g, now);
  const row = await maybeOne<GrantRow>(tx, upsert.sql, upsert.params);
  if (!row) throw new Error('the grant upsert returned no row');
  return row;
}

/**
 * findLiveGrant as a SQL expression over other columns (SQL text of each argument): the grant as one
 * JSON column, null when there is no live one, for a statement that reads the grant's keys anyway.
 */
export const liveGrantJsonSql = (realmId: string, userId: string, clientId: string, orgId: string): string =>
  `(select json_build_object('id', g.id, 'user_id', g.user_id, 'client_id', g.client_id, 'org_id', g.org_id,
            'scopes', g.scopes, 'resources', g.resources)
      from oauth_grants g
     where g.realm_id = ${realmId} and g.user_id = ${userId} and g.client_id = ${clientId}
       and g.org_id is not distinct from ${orgId} and g.revoked_at is null)`;

export const findLiveGrant = (
  q: Queryable,
  realmId: string,
  userId: string,
  clientId: string,
  orgId: string | null,
) =>
  maybeOne<GrantRow>(
    q,
    `select ${GRANT_COLUMNS} from oauth_grants
      where realm_id = $1 and user_id = $2 and client_id = $3 and org_id is not distinct from $4::text
        and revoked_at is null`,
    [realmId, userId, clientId, orgId],
  );

export interface AccountRevocation {
  sessions: string[];
  grants: number;
  refreshFamilies: number;
  opaqueTokens: number;
  /** Support grants that were still active, on the account or held by it as the support user. */
  supportGrants: number;
}

/**
 * Logout everywhere and every other account-wide revocation: sessions, grants (offline ones
 * too), refresh families, opaque tokens and support grants (on the account, or held by it as the
 * support user) end, and every token issued up to this second is inactive at introspection
 * through the user-level record.
 */
export async function revokeAccount(
  tx: Tx,
  realmId: string,
  userId: string,
  reason: string,
  now: Date,
  correlationId?: string,
): Promise<AccountRevocation> {
  const sessions = await tx.query<{ id: string }>(
    `update sessions set revoked_at = $3, revoked_reason = $4
      where realm_id = $1 and user_id = $2 and revoked_at is null and absolute_expires_at > $3 returning id`,
    [realmId, userId, now, reason],
  );
  const grants = await tx.query(
    `update oauth_grants set revoked_at = $3, revoked_reason = $4
      where realm_id = $1 and user_id = $2 and revoked_at is null`,
    [realmId, userId, now, reason],
  );
  const families = await tx.query(
    `update refresh_families set revoked_at = $3, revoked_reason = $4
      where realm_id = $1 and user_id = $2 and revoked_at is null`,
    [realmId, userId, now, reason],
  );
  const opaque = await tx.query(
    `update opaque_access_tokens set revoked_at = $3
      where realm_id = $1 and user_id = $2 and revoked_at is null and expires_at > $3`,
    [realmId, userId, now],
  );
  // doc 2, Revocation exposure: account-wide revocations end support grants too, those on the
  // account and those the account holds as the support user (docs/support-access.md).
  const system = { type: 'system', id: null } as const;
  const onAccount = await endSupportGrants(
    tx,
    realmId,
    { targetUserId: userId },
    'account_revoked',
    system,
    now,
    correlationId,
  );
  const asActor = await endSupportGrants(
    tx,
    realmId,
    { actorUserId: userId },
    'actor_revoked',
    system,
    now,
    correlationId,
  );
  await tx.query(
    `insert into user_revocations (realm_id, user_id, revoked_before) values ($1, $2, date_trunc('second', $3::timestamptz))
     on conflict (realm_id, user_id) do update set revoked_before = excluded.revoked_before`,
    [realmId, userId, now],
  );
  return {
    sessions: sessions.rows.map((r) => r.id),
    grants: grants.rowCount,
    refreshFamilies: families.rowCount,
    opaqueTokens: opaque.rowCount,
    supportGrants: onAccount.length + asActor.length,
  };
}

/** The account-wide revocation record of the account (whole seconds), or null when it has none. */
export async function accountRevokedBefore(
  q: Queryable,
  realmId: string,
  userId: string,
): Promise<Date | null> {
  const row = await maybeOne<{ revoked_before: Date }>(
    q,
    'select revoked_before from user_revocations where realm_id = $1 and user_id = $2',
    [realmId, userId],
  );
  return row ? new Date(row.revoked_before) : null;
}

/** Ends one session and the refresh families bound to it. */
export async function revokeSession(
  tx: Tx,
  realmId: string,
  sessionId: string,
  reason: string,
  now: Date,
): Promise<boolean> {
  const r = await tx.query(
    `update sessions set revoked_at = $3, revoked_reason = $4
      where realm_id = $1 and id = $2 and revoked_at is null`,
    [realmId, sessionId, now, reason],
  );
  await tx.query(
    `update refresh_families set revoked_at = $3, revoked_reason = $4
      where realm_id = $1 and session_id = $2 and revoked_at is null`,
    [realmId, sessionId, now, reason],
  );
  return r.rowCount > 0;
}
