// otp/send {purpose} and otp/verify {code} (spec doc 1, transaction endpoints): emailed and SMS
// codes for sign-in (email_otp, sms_otp), magic links (sent here, answered by magic-link) and the
// verification of an email address or phone number (verify_email, verify_contact). Both steps are
// padded like the password step, so known and unknown identifiers answer alike in shape and time.
// A wrong code spends the transaction's failure budget; the codes are primary factors only.
import { enumOf, object, string } from '../../platform/http/decode.ts';
import { Problem } from '../../platform/http/problem.ts';
import {
  identifierTypeOf,
  markIdentifierVerified,
  removeRequiredAction,
  setUserState,
} from '../../users/index.ts';
import type { ChallengePurpose } from '../challenges.repo.ts';
import { consumeChallenge } from '../challenges.repo.ts';
import type { ActionType } from '../next-actions.types.ts';
import type { SigninTx } from '../transaction.ts';
import { withFactor } from '../transitions.ts';
import {
  challengeDigest,
  digestsMatch,
  liveChallenge,
  type SendTarget,
  sendChallenge,
} from './otp-challenge.ts';
import { proofFailed } from './proof-failed.ts';
import { type Step, type StepContext, stepActor, stepRecorder } from './step.ts';

const PURPOSES = ['login', 'magic_link', 'verify_email', 'verify_contact'] as const;
type SendPurpose = (typeof PURPOSES)[number];

const offeredTypes = (ctx: StepContext): ActionType[] =>
  ctx.evaluation.kind === 'actions' ? ctx.evaluation.actions.map((a) => a.type) : [];

const notOffered = (what: string) => new Problem(409, 'conflict', `${what} is not offered now`);

/** Where the code for a purpose goes, given what the transaction offers now. */
function targetOf(t: SigninTx, ctx: StepContext, purpose: SendPurpose): SendTarget {
  const offered = offeredTypes(ctx);
  const user = ctx.facts.user;
  const userId = t.userId;
  switch (purpose) {
    case 'login': {
      const channel = offered.includes('email_otp') ? 'email' : offered.includes('sms_otp') ? 'sms' : null;
      if (!channel) throw notOffered('a sign-in code');
      const destination = t.identifier ?? (channel === 'email' ? user?.email : user?.phone) ?? null;
      if (!destination) throw notOffered('a sign-in code');
      return { purpose, channel, destination, userId };
    }
    case 'magic_link': {
      const destination = t.identifier ?? user?.email ?? null;
      if (!offered.includes('magic_link') || !destination) throw notOffered('a magic link');
      return { purpose, channel: 'email', destination, userId };
    }
    case 'verify_email': {
      // A registration whose address was taken: the code is written like any other, never sent.
      const destination = user?.email ?? (t.registrationDecoy ? t.identifier : null);
      if (!offered.includes('verify_email') || !destination) throw notOffered('email verification');
      return { purpose, channel: 'email', destination, userId: user?.id ?? null };
    }
    case 'verify_contact':
      if (!offered.includes('verify_contact') || !user?.phone) throw notOffered('phone verification');
      return { purpose, channel: 'sms', destination: user.phone, userId: user.id };
  }
}

export const otpSendStep: Step<{ purpose: SendPurpose }> = {
  path: 'otp/send',
  spendsBudgets: true,
  accountBudget: 'mailbox',
  action: null, // which action it serves depends on the purpose; checked in run
  decode: object({ purpose: enumOf(PURPOSES) }),
  padded: true,
  async run(q, t, body, ctx) {
    await sendChallenge(q, t, ctx, targetOf(t, ctx, body.purpose));
    return { tx: t };
  },
};

/** The purpose a code answers now: the first offered action that has a code out. */
function codePurpose(ctx: StepContext): { purpose: ChallengePurpose; action: ActionType } | null {
  const offered = offeredTypes(ctx);
  const candidates: [ActionType, ChallengePurpose][] = [
    ['email_otp', 'login'],
    ['sms_otp', 'login'],
    ['verify_email', 'verify_email'],
    ['verify_contact', 'verify_contact'],
    ['password', 'password_reset'],
  ];
  for (const [action, purpose] of candidates)
    if (offered.includes(action) && ctx.facts.sent.includes(purpose)) return { purpose, action };
  return null;
}

/** A proved address is verified; an account waiting for that proof becomes active. */
async function addressProved(
  q: Parameters<Step<unknown>['run']>[0],
  ctx: StepContext,
  userId: string,
  channel: 'email' | 'sms',
  destination: string,
) {
  const type = channel === 'email' ? 'email' : 'phone';
  if (identifierTypeOf(destination) !== type) return;
  await markIdentifierVerified(q, ctx.realm.id, userId, type, destination, ctx.now);
  const record = stepRecorder(q, ctx.realm.id, ctx, stepActor(userId));
  if (channel === 'email') {
    await removeRequiredAction(q, ctx.realm.id, userId, 'verify_email', ctx.now);
    if (ctx.facts.user?.state === 'pending_verification') {
      await setUserState(q, ctx.realm.id, userId, 'active', ctx.now);
      await record.audit('user.verified', {
        category: 'identity',
        subject: { type: 'user', id: userId },
        data: { state: 'active' },
      });
    }
  } else {
    await removeRequiredAction(q, ctx.realm.id, userId, 'verify_contact', ctx.now);
  }
  await record.audit('user.identifier_verified', {
    category: 'identity',
    subject: { type: 'user', id: userId },
    data: { type },
  });
}

/**
 * password/reset {}: mails a password reset code to the email identifier of the transaction
 * (answered by otp/verify, then update_password). Unknown addresses answer alike and get nothing.
 */
export const passwordResetStep: Step<Record<string, never>> = {
  path: 'password/reset',
  spendsBudgets: true,
  accountBudget: 'mailbox',
  action: 'password',
  decode: object({}),
  padded: true,
  async run(q, t, _body, ctx) {
    const offered =
      ctx.evaluation.kind === 'actions'
        ? ctx.evaluation.actions.find((a) => a.type === 'password')
        : undefined;
    const destination = t.identifier;
    if (!offered?.options?.reset || !destination) throw notOffered('a password reset');
    await sendChallenge(q, t, ctx, {
      purpose: 'password_reset',
      channel: 'email',
      destination,
      userId: t.userId,
    });
    return { tx: t };
  },
};

export const otpVerifyStep: Step<{ code: string }> = {
  path: 'otp/verify',
  spendsBudgets: true,
  accountBudget: 'mailbox',
  action: null, // answers email_otp, sms_otp, verify_email or verify_contact; checked in run
  decode: object({ code: string({ minLength: 1, maxLength: 16 }) }),
  padded: true,
  async run(q, t, body, ctx) {
    const which = codePurpose(ctx);
    if (!which) throw new Problem(409, 'conflict', 'no code was sent for an action offered now');
    const factor = which.action === 'sms_otp' || which.action === 'verify_contact' ? 'sms' : 'otp';
    const c = await liveChallenge(q, t, which.purpose, ctx.now);
    const ok =
      c !== null &&
      c.user_id !== null &&
      c.user_id === (t.userId ?? c.user_id) &&
      digestsMatch(c.code_digest, challengeDigest(t, which.purpose, body.code.trim()));
    if (!ok || !c?.user_id || !c.destination) return proofFailed(q, t, ctx, factor);
    await consumeChallenge(q, t.realmId, t.id, which.purpose, ctx.now);
    await addressProved(q, ctx, c.user_id, c.channel, c.destination);
    // A reset code proves the address like a sign-in code; update_password follows (facts.resetProved).
    if (which.purpose !== 'login' && which.purpose !== 'password_reset') return { tx: t };
    return { tx: withFactor({ ...t, userId: c.user_id }, factor) };
  },
};

export const magicLinkStep: Step<{ token: string }> = {
  path: 'magic-link',
  spendsBudgets: true,
  accountBudget: 'mailbox',
  action: 'magic_link',
  decode: object({ token: string({ minLength: 1, maxLength: 128 }) }),
  padded: true,
  async run(q, t, body, ctx) {
    const c = await liveChallenge(q, t, 'magic_link', ctx.now);
    const ok =
      c !== null &&
      c.user_id !== null &&
      digestsMatch(c.link_digest, challengeDigest(t, 'magic_link', body.token));
    if (!ok || !c?.user_id || !c.destination) return proofFailed(q, t, ctx, 'magic_link');
    await consumeChallenge(q, t.realmId, t.id, 'magic_link', ctx.now);
    await addressProved(q, ctx, c.user_id, 'email', c.destination);
    return { tx: withFactor({ ...t, userId: c.user_id }, 'magic_link') };
  },
};
