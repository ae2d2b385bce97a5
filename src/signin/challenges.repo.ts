// SQL of the codes and links sent during a sign-in transaction (migrations/0017,
// signin_challenges): one row per transaction and purpose, digests only, consumed once.
import type { Queryable, Tx } from '../platform/db/db.ts';

export type ChallengePurpose =
  | 'login'
  | 'magic_link'
  | 'verify_email'
  | 'verify_contact'
  | 'password_reset'
  /** The emailed-code alternative of an authentication-flow challenge. */
  | 'challenge';

export interface ChallengeRow {
  realm_id: string;
  transaction_id: string;
  purpose: ChallengePurpose;
  channel: 'email' | 'sms';
  user_id: string | null;
  destination: string | null;
  code_digest: string | null;
  link_digest: string | null;
  sends: number;
  last_sent_at: Date | null;
  expires_at: Date;
  consumed_at: Date | null;
  created_at: Date;
}

export async function lockChallenge(tx: Tx, realmId: string, txId: string, purpose: ChallengePurpose) {
  const r = await tx.query<ChallengeRow>(
    `select * from signin_challenges where realm_id = $1 and transaction_id = $2 and purpose = $3 for update`,
    [realmId, txId, purpose],
  );
  return r.rows[0] ?? null;
}

/** Writes a fresh code or link for the purpose; the send count carries over. */
export async function upsertChallenge(
  tx: Tx,
  c: Omit<ChallengeRow, 'sends' | 'consumed_at' | 'created_at' | 'last_sent_at'>,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into signin_challenges (realm_id, transaction_id, purpose, channel, user_id, destination, code_digest,
       link_digest, sends, last_sent_at, expires_at, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, 1, $10, $9, $10)
     on conflict (realm_id, transaction_id, purpose) do update set channel = excluded.channel,
       user_id = excluded.user_id, destination = excluded.destination, code_digest = excluded.code_digest,
       link_digest = excluded.link_digest, sends = signin_challenges.sends + 1, last_sent_at = excluded.last_sent_at,
       expires_at = excluded.expires_at, consumed_at = null`,
    [
      c.realm_id,
      c.transaction_id,
      c.purpose,
      c.channel,
      c.user_id,
      c.destination,
      c.code_digest,
      c.link_digest,
      c.expires_at,
      now,
    ],
  );
}

export async function consumeChallenge(
  tx: Tx,
  realmId: string,
  txId: string,
  purpose: ChallengePurpose,
  now: Date,
) {
  await tx.query(
    `update signin_challenges set consumed_at = $4 where realm_id = $1 and transaction_id = $2 and purpose = $3`,
    [realmId, txId, purpose, now],
  );
}

export async function forgetReset(tx: Tx, realmId: string, txId: string): Promise<void> {
  await tx.query(
    `delete from signin_challenges where realm_id = $1 and transaction_id = $2 and purpose = 'password_reset'`,
    [realmId, txId],
  );
}

/** Codes and links sent to a destination since `since`, over all transactions of the realm. */
export async function sendsTo(
  q: Queryable,
  realmId: string,
  destination: string,
  since: Date,
): Promise<number> {
  const r = await q.query<{ n: string | null }>(
    `select sum(sends) as n from signin_challenges where realm_id = $1 and destination = $2 and last_sent_at > $3`,
    [realmId, destination, since],
  );
  return Number(r.rows[0]?.n ?? 0);
}
