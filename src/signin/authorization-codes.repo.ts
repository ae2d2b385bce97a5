import type { Companion } from '../platform/db/companions.ts';
import type { Tx } from '../platform/db/db.ts';

export interface NewCode {
  realmId: string;
  codeDigest: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  nonce: string | null;
  scopes: string[];
  resources: string[];
  userId: string;
  sessionId: string;
  authTime: Date;
  amr: string[];
  acr: string;
  transactionId: string;
  /** The organization the sign-in was for. */
  orgId: string | null;
  expiresAt: Date;
}

/** The insert of a new code, for a caller joining it to other writes. */
export const codeInsert = (c: NewCode, now: Date): Companion => ({
  sql: `insert into authorization_codes (realm_id, code_digest, client_id, redirect_uri, code_challenge, nonce, scopes,
       resources, user_id, session_id, auth_time, amr, acr, transaction_id, expires_at, created_at, org_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
  params: [
    c.realmId,
    c.codeDigest,
    c.clientId,
    c.redirectUri,
    c.codeChallenge,
    c.nonce,
    c.scopes,
    c.resources,
    c.userId,
    c.sessionId,
    c.authTime,
    c.amr,
    c.acr,
    c.transactionId,
    c.expiresAt,
    now,
    c.orgId,
  ],
});

export async function insertAuthorizationCode(tx: Tx, c: NewCode, now: Date): Promise<void> {
  const insert = codeInsert(c, now);
  await tx.query(insert.sql, insert.params);
}
