import type { Companion } from '../platform/db/companions.ts';
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { idleUntil, type Lifetimes } from './session-lifetimes.ts';
import { liveSessionSql } from './session-liveness.ts';

export interface SessionRow {
  realm_id: string;
  id: string;
  user_id: string;
  auth_time: Date;
  amr: string[];
  acr: string;
  mfa: boolean;
  recovery_restricted: boolean;
  remember_me: boolean;
  transient: boolean;
  /** The idle length the session started with (docs/signin.md "Session lifetimes"). */
  idle_seconds: number;
  idle_expires_at: Date;
  absolute_expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
  last_seen_at: Date;
  user_agent: string | null;
  client_id: string | null;
}

export interface NewSession {
  realmId: string;
  userId: string;
  cookieDigest: string | null;
  amr: string[];
  acr: string;
  mfa: boolean;
  recoveryRestricted: boolean;
  rememberMe: boolean;
  transient: boolean;
  lifetimes: Lifetimes;
  /** The client signed in to and the browser's user agent, shown in the account's session list. */
  clientId?: string | null;
  userAgent?: string | null;
}

/**
 * The insert of a new session (its rows: the session), for a caller joining it to other writes;
 * `row` is the session as the insert writes it.
 */
export function sessionInsert(s: NewSession, now: Date): Companion & { id: string; row: SessionRow } {
  const id = newId('ses', now.getTime());
  const idleExpiresAt = new Date(now.getTime() + s.lifetimes.idleMs);
  const absoluteExpiresAt = new Date(now.getTime() + s.lifetimes.absoluteMs);
  const idleSeconds = Math.round(s.lifetimes.idleMs / 1000);
  return {
    id,
    row: {
      realm_id: s.realmId,
      id,
      user_id: s.userId,
      auth_time: now,
      amr: s.amr,
      acr: s.acr,
      mfa: s.mfa,
      recovery_restricted: s.recoveryRestricted,
      remember_me: s.rememberMe,
      transient: s.transient,
      idle_seconds: idleSeconds,
      idle_expires_at: idleExpiresAt,
      absolute_expires_at: absoluteExpiresAt,
      revoked_at: null,
      created_at: now,
      last_seen_at: now,
      user_agent: s.userAgent ?? null,
      client_id: s.clientId ?? null,
    },
    sql: `insert into sessions (realm_id, id, user_id, cookie_digest, auth_time, amr, acr, mfa, recovery_restricted,
       remember_me, transient, created_at, last_seen_at, idle_expires_at, absolute_expires_at, client_id, user_agent,
       idle_seconds)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $5, $5, $12, $13, $14, $15, $16) returning *`,
    params: [
      s.realmId,
      id,
      s.userId,
      s.cookieDigest,
      now,
      s.amr,
      s.acr,
      s.mfa,
      s.recoveryRestricted,
      s.rememberMe,
      s.transient,
      idleExpiresAt,
      absoluteExpiresAt,
      s.clientId ?? null,
      s.userAgent ?? null,
      idleSeconds,
    ],
  };
}

export async function insertSession(tx: Tx, s: NewSession, now: Date): Promise<SessionRow> {
  const insert = sessionInsert(s, now);
  const r = await tx.query<SessionRow>(insert.sql, insert.params);
  return r.rows[0] as SessionRow;
}

/** A live session by its browser cookie digest: not revoked, not past either expiry. */
export const findLiveSessionByCookie = (q: Queryable, realmId: string, cookieDigest: string, now: Date) =>
  maybeOne<SessionRow>(
    q,
    `select * from sessions where realm_id = $1 and cookie_digest = $2
       and ${liveSessionSql('sessions', '$3')}`,
    [realmId, cookieDigest, now],
  );

/**
 * Reuses a live session for a new sign-in: extends its idle expiry (never past the absolute one)
 * and adds the factors this transaction proved. Null when the session ended meanwhile.
 */
export async function reuseSession(
  tx: Tx,
  realmId: string,
  sessionId: string,
  userId: string,
  factors: string[],
  mfa: boolean,
  /** This sign-in proved a phishing-resistant factor (signin/transaction.ts phishingResistantProved). */
  phishingResistant: boolean,
  now: Date,
): Promise<SessionRow | null> {
  const live = await maybeOne<SessionRow>(
    tx,
    `select * from sessions where realm_id = $1 and id = $2 and user_id = $3
       and ${liveSessionSql('sessions', '$4')} for update`,
    [realmId, sessionId, userId, now],
  );
  if (!live) return null;
  const idleEnd = idleUntil(now, live.idle_seconds, new Date(live.absolute_expires_at));
  const amr = [...new Set([...live.amr, ...factors])];
  const r = await tx.query<SessionRow>(
    `update sessions set last_seen_at = $3, idle_expires_at = $4, amr = $5, mfa = mfa or $6,
       acr = case when acr = 'phishing_resistant' or $7 then 'phishing_resistant'
                  when mfa or $6 then 'mfa' else acr end
     where realm_id = $1 and id = $2 returning *`,
    [realmId, sessionId, now, idleEnd, amr, mfa, phishingResistant],
  );
  return r.rows[0] ?? null;
}

/** The account's live sessions, newest first. */
export const listLiveSessions = (q: Queryable, realmId: string, userId: string, now: Date) =>
  many<SessionRow>(
    q,
    `select * from sessions where realm_id = $1 and user_id = $2
       and ${liveSessionSql('sessions', '$3')} order by created_at desc, id desc`,
    [realmId, userId, now],
  );

/** One live session of this account, held until the transaction ends; null for anyone else's. */
export const lockLiveSession = (tx: Tx, realmId: string, userId: string, sessionId: string, now: Date) =>
  maybeOne<SessionRow>(
    tx,
    `select * from sessions where realm_id = $1 and id = $2 and user_id = $3
       and ${liveSessionSql('sessions', '$4')} for update`,
    [realmId, sessionId, userId, now],
  );

/** Ends every live session of the account except `keepId` (a password change keeps the caller's). */
export async function revokeOtherSessions(
  tx: Tx,
  realmId: string,
  userId: string,
  keepId: string | null,
  reason: string,
  now: Date,
) {
  const r = await tx.query<{ id: string }>(
    `update sessions set revoked_at = $3, revoked_reason = $4
      where realm_id = $1 and user_id = $2 and revoked_at is null and absolute_expires_at > $3
        and ($5::text is null or id <> $5)
      returning id`,
    [realmId, userId, now, reason, keepId],
  );
  return r.rows.map((row) => row.id);
}
