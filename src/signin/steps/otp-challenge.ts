// Sending and checking the codes and links of otp/send, otp/verify and magic-link (spec doc 1,
// evaluation order steps 2, 3 and 6). A code is six digits, a link carries 32 random bytes; both
// live tokens.challenge_ttl, are stored as digests bound to the transaction and purpose, and are
// consumed once. For an identifier without an account the challenge row is written the same way
// but nothing is sent, and it never verifies.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { enqueueNotification, localeOf, type TemplateName } from '../../notifications/index.ts';
import type { Tx } from '../../platform/db/db.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { randomToken } from '../../platform/ids.ts';
import { brandNameOf } from '../../realms/index.ts';
import {
  type ChallengePurpose,
  type ChallengeRow,
  lockChallenge,
  sendsTo,
  upsertChallenge,
} from '../challenges.repo.ts';
import { configuredLoginUi } from '../login-ui.ts';
import type { SigninTx } from '../transaction.ts';
import type { StepContext } from './step.ts';

/** Codes or links sent for one purpose of one transaction; more answers 429 rate_limited. */
export const MAX_SENDS = 5;
/**
 * Codes or links sent to one address in an hour over all transactions; more answers 429. Counted
 * per address typed, whether or not an account has it, so the limit tells nothing either.
 */
export const MAX_SENDS_PER_DESTINATION_HOUR = 10;

export const challengeDigest = (t: SigninTx, purpose: ChallengePurpose, secret: string): string =>
  createHash('sha256').update(`${t.realmId}\u0000${t.id}\u0000${purpose}\u0000${secret}`).digest('hex');

export function digestsMatch(a: string | null, b: string): boolean {
  if (a === null || a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

const TEMPLATE: Record<ChallengePurpose, TemplateName> = {
  login: 'login_code',
  magic_link: 'magic_link',
  verify_email: 'verify_email',
  verify_contact: 'sms_code',
  password_reset: 'password_reset',
  challenge: 'login_code',
};

export interface SendTarget {
  purpose: ChallengePurpose;
  channel: 'email' | 'sms';
  /** Where the code goes: the identifier typed, or the account's address. */
  destination: string;
  /** null: no account behind the destination; nothing is sent. */
  userId: string | null;
}

export async function sendChallenge(q: Tx, t: SigninTx, ctx: StepContext, target: SendTarget): Promise<void> {
  const { purpose } = target;
  const existing = await lockChallenge(q, t.realmId, t.id, purpose);
  if (existing && existing.sends >= MAX_SENDS)
    throw new Problem(429, 'rate_limited', 'no more codes are sent in this transaction');
  const hourAgo = new Date(ctx.now.getTime() - 3_600_000);
  if ((await sendsTo(q, t.realmId, target.destination, hourAgo)) >= MAX_SENDS_PER_DESTINATION_HOUR)
    throw new Problem(429, 'rate_limited', 'too many codes were sent to this address; try again later');
  const minutes = Math.round(ctx.app.config.tokens.challengeTtlMs / 60_000);
  const isLink = purpose === 'magic_link';
  const secret = isLink ? randomToken(32) : String(randomInt(0, 1_000_000)).padStart(6, '0');
  let link: string | undefined;
  if (isLink) {
    const ui = configuredLoginUi(ctx.app, ctx.policy);
    if (!ui) throw problem.unavailable('the realm has no login UI for magic links');
    ui.searchParams.set('transaction_id', t.id);
    ui.searchParams.set('realm', ctx.realm.name);
    ui.searchParams.set('magic_link', secret);
    // The page speaks the sign-in's language even where it cannot read the transaction (a link
    // opened in another browser is refused, in words the person reads).
    if (t.uiLocales) ui.searchParams.set('ui_locales', t.uiLocales);
    link = ui.toString();
  }
  await upsertChallenge(
    q,
    {
      realm_id: t.realmId,
      transaction_id: t.id,
      purpose,
      channel: target.channel,
      user_id: target.userId,
      destination: target.destination,
      code_digest: isLink ? null : challengeDigest(t, purpose, secret),
      link_digest: isLink ? challengeDigest(t, purpose, secret) : null,
      expires_at: new Date(ctx.now.getTime() + ctx.app.config.tokens.challengeTtlMs),
    },
    ctx.now,
  );
  if (target.userId === null) return;
  const keyring = ctx.app.keyring;
  if (!keyring) throw problem.unavailable('no root key is configured to seal outgoing messages');
  await enqueueNotification(
    q,
    keyring,
    {
      realmId: t.realmId,
      channel: target.channel,
      template: target.channel === 'sms' ? 'sms_code' : TEMPLATE[purpose],
      locale: localeOf(t.uiLocales),
      to: target.destination,
      vars: {
        realm: brandNameOf(ctx.realm, ctx.policy),
        minutes,
        ...(isLink ? { link: link as string } : { code: secret }),
      },
    },
    ctx.now,
  );
}

/** The challenge a proof answers, if it is live and belongs to an account; null otherwise. */
export async function liveChallenge(
  q: Tx,
  t: SigninTx,
  purpose: ChallengePurpose,
  now: Date,
): Promise<ChallengeRow | null> {
  const c = await lockChallenge(q, t.realmId, t.id, purpose);
  if (!c || c.consumed_at !== null || c.expires_at.getTime() <= now.getTime()) return null;
  return c;
}
