// Refresh token families (spec doc 2, Revocation exposure: refresh runs the live checks in its
// rotation transaction). Tokens are stored as digests; a family ends as a whole.

import { digestToken } from '../kernel/digest.ts';
import { type Companion, together } from '../platform/db/companions.ts';
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId, randomToken } from '../platform/ids.ts';

export const REFRESH_TOKEN_PREFIX = 'pa_rt_';
const REFRESH_SHAPE = /^pa_rt_[A-Za-z0-9_-]{43}$/;

export const isRefreshTokenShape = (token: string): boolean => REFRESH_SHAPE.test(token);
export const newRefreshToken = (): string => `${REFRESH_TOKEN_PREFIX}${randomToken(32)}`;

export interface RefreshFamilyRow {
  id: string;
  grant_id: string;
  user_id: string;
  client_id: string;
  org_id: string | null;
  session_id: string | null;
  offline: boolean;
  scopes: string[];
  resources: string[];
  auth_time: Date;
  amr: string[];
  acr: string;
  /** The idle length the family started with: its session's, or the policy's offline one. */
  idle_seconds: number;
  idle_expires_at: Date;
  absolute_expires_at: Date;
  revoked_at: Date | null;
  /** The DPoP key thumbprint the family is bound to (public clients), or null. */
  dpop_jkt: string | null;
  /** The client certificate's SHA-256 thumbprint the family is bound to (public clients), or null. */
  cert_thumbprint: string | null;
}

export interface NewFamily {
  realmId: string;
  grantId: string;
  userId: string;
  clientId: string;
  /** The organization of the grant; reuse detection names it on its event. */
  orgId: string | null;
  sessionId: string | null;
  offline: boolean;
  scopes: string[];
  resources: string[];
  authTime: Date;
  amr: readonly string[];
  acr: string;
  idleMs: number;
  /** Absolute end of the family. */
  absoluteExpiresAt: Date;
  /** Binds the family to a DPoP key (RFC 9449 section 5, public clients). */
  dpopJkt?: string | null;
  /** Binds the family to a client certificate (RFC 8705 section 4, public clients; migration 0058). */
  certThumbprint?: string | null;
}

/**
 * A new family with its first token, in one statement; `along` gives more writes of the same change
 * (statements of their own, platform/db/companions.ts) that name the family, joined to it.
 */
export async function startFamily(
  tx: Tx,
  f: NewFamily,
  now: Date,
  along?: (familyId: string) => Companion,
): Promise<{ familyId: string; token: string }> {
  const familyId = newId('rtf', now.getTime());
  const idleUntil = new Date(Math.min(now.getTime() + f.idleMs, f.absoluteExpiresAt.getTime()));
  const token = newRefreshToken();
  const family: Companion = {
    sql: `insert into refresh_families (realm_id, id, grant_id, user_id, client_id, session_id, offline, scopes,
         resources, auth_time, amr, acr, created_at, idle_expires_at, absolute_expires_at, org_id, idle_seconds, dpop_jkt,
         cert_thumbprint)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
    params: [
      f.realmId,
      familyId,
      f.grantId,
      f.userId,
      f.clientId,
      f.sessionId,
      f.offline,
      f.scopes,
      f.resources,
      f.authTime,
      [...f.amr],
      f.acr,
      now,
      idleUntil,
      f.absoluteExpiresAt,
      f.orgId,
      Math.round(f.idleMs / 1000),
      f.dpopJkt ?? null,
      f.certThumbprint ?? null,
    ],
  };
  const first: Companion = {
    sql: 'insert into refresh_tokens (realm_id, token_digest, family_id, created_at) values ($1, $2, $3, $4)',
    params: [f.realmId, digestToken(token), familyId, now],
  };
  const joined = together(first, family, ...(along ? [along(familyId)] : []));
  await tx.query(joined.sql, joined.params);
  return { familyId, token };
}

export async function addToken(tx: Tx, realmId: string, familyId: string, now: Date): Promise<string> {
  const token = newRefreshToken();
  await tx.query(
    'insert into refresh_tokens (realm_id, token_digest, family_id, created_at) values ($1, $2, $3, $4)',
    [realmId, digestToken(token), familyId, now],
  );
  return token;
}

export interface PresentedRefresh {
  family: RefreshFamilyRow;
  rotatedAt: Date | null;
}

/** The family of a presented token, locked for the rotation; null for an unknown token. */
export async function lockByToken(tx: Tx, realmId: string, token: string): Promise<PresentedRefresh | null> {
  const row = await maybeOne<RefreshFamilyRow & { rotated_at: Date | null }>(
    tx,
    `select f.*, t.rotated_at from refresh_tokens t
       join refresh_families f on f.realm_id = t.realm_id and f.id = t.family_id
      where t.realm_id = $1 and t.token_digest = $2 for update of f, t`,
    [realmId, digestToken(token)],
  );
  if (!row) return null;
  const { rotated_at, ...family } = row;
  return { family, rotatedAt: rotated_at };
}

/** The family of a token without locking (revocation endpoint). */
export const findFamilyByToken = (q: Queryable, realmId: string, token: string) =>
  maybeOne<RefreshFamilyRow>(
    q,
    `select f.* from refresh_tokens t join refresh_families f on f.realm_id = t.realm_id and f.id = t.family_id
      where t.realm_id = $1 and t.token_digest = $2`,
    [realmId, digestToken(token)],
  );

export async function markRotated(tx: Tx, realmId: string, token: string, now: Date): Promise<void> {
  await tx.query('update refresh_tokens set rotated_at = $3 where realm_id = $1 and token_digest = $2', [
    realmId,
    digestToken(token),
    now,
  ]);
}

/**
 * A rotation is activity: the family's idle expiry moves to `idleUntil`, and the SSO session it is
 * bound to (if any) is seen now and its idle expiry moves to `session.idleUntil`, never backwards
 * (the caller bounds both by their absolute expiries). One statement for both.
 */
export async function touchFamily(
  tx: Tx,
  realmId: string,
  familyId: string,
  idleUntil: Date,
  session: { id: string; idleUntil: Date } | null,
  now: Date,
): Promise<void> {
  await tx.query(
    `with family as (update refresh_families set idle_expires_at = $3 where realm_id = $1 and id = $2)
     update sessions set last_seen_at = $6, idle_expires_at = greatest(idle_expires_at, $5)
      where realm_id = $1 and id = $4 and revoked_at is null`,
    [realmId, familyId, idleUntil, session?.id ?? null, session?.idleUntil ?? null, now],
  );
}

export async function revokeFamily(tx: Tx, realmId: string, familyId: string, reason: string, now: Date) {
  const r = await tx.query(
    `update refresh_families set revoked_at = $3, revoked_reason = $4
      where realm_id = $1 and id = $2 and revoked_at is null`,
    [realmId, familyId, now, reason],
  );
  return r.rowCount > 0;
}
