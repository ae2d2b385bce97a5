// challenge {provider_response} | {code}, and challenge/send (spec doc 1, endpoint table and
// authentication_flow outcome challenge): the provider response (a CAPTCHA-style token) is
// verified over HTTP, before the row lock, by the provider the realm names in
// authentication_flow.challenge_provider out of the operator's security.challenge_providers; a
// wrong one is a failed proof. With authentication_flow.email_code_alternative, challenge/send mails
// a six-digit code to the account's email address (the emailed-code machinery of otp-challenge.ts,
// purpose `challenge`) and challenge {code} answers it; a wrong or expired code is a failed proof.
import { object, optional, string } from '../../platform/http/decode.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { EgressGuard } from '../../platform/net/egress-guard.ts';
import type { RealmPolicy } from '../../realms/index.ts';
import { currentPolicy } from '../../realms/index.ts';
import { consumeChallenge } from '../challenges.repo.ts';
import { flowSetting } from '../flow-rules.ts';
import { markChallengePassed } from '../flow-state.repo.ts';
import type { ChallengeProvider, SigninDeps } from '../signin.deps.ts';
import { challengeDigest, digestsMatch, liveChallenge, sendChallenge } from './otp-challenge.ts';
import { proofFailed } from './proof-failed.ts';
import type { Step } from './step.ts';

const emailCodeAllowed = (policy: RealmPolicy): boolean =>
  flowSetting(policy, 'email_code_alternative') === true;

const noEmailCode = () =>
  new Problem(
    409,
    'conflict',
    'the realm does not offer the emailed-code alternative (email_code_alternative)',
  );

const PROVIDER_TIMEOUT_MS = 5000;
const MAX_PROVIDER_ANSWER_BYTES = 16 * 1024;

/**
 * The provider is reached like every outbound destination: through the egress guard, with the
 * operator's allowlist (delivery.egress_allowlist) for a provider on a private network.
 */
const guardOf = (config: SigninDeps['config']) =>
  new EgressGuard({
    allowlist: config.delivery.egressAllowlist,
    allowPrivate: config.delivery.allowPrivateWebhooks && config.environment !== 'production',
  });

/**
 * Asks the provider whether the response is valid: POST {response, secret} as JSON, success when
 * it answers 2xx with {success: true}. An unreachable, refused, slow or garbled provider fails
 * closed: the challenge is not passed.
 */
async function verifyWithProvider(app: SigninDeps, p: ChallengeProvider, response: string): Promise<boolean> {
  const r = await app.outbound.post({
    url: p.url,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ response, ...(p.secret ? { secret: p.secret } : {}) }),
    guard: guardOf(app.config),
    timeoutMs: PROVIDER_TIMEOUT_MS,
    maxResponseBytes: MAX_PROVIDER_ANSWER_BYTES,
    keepBody: true,
  });
  if (r.kind !== 'response' || r.status < 200 || r.status > 299 || !r.body) return false;
  try {
    return (JSON.parse(r.body.toString('utf8')) as { success?: unknown }).success === true;
  } catch {
    return false;
  }
}

const decode = object({
  provider_response: optional(string({ minLength: 1, maxBytes: 8192 })),
  code: optional(string({ minLength: 1, maxLength: 64 })),
});

/** What prepare found: the provider's verdict, or an emailed code to check under the row lock. */
type Prepared = { kind: 'provider'; passed: boolean } | { kind: 'code'; code: string };

export const challengeStep: Step<{ providerResponse?: string; code?: string }, Prepared> = {
  path: 'challenge',
  spendsBudgets: true,
  action: 'challenge',
  decode,
  async prepare(app, t, body) {
    if ((body.providerResponse === undefined) === (body.code === undefined))
      throw problem.invalidRequest('send exactly one of provider_response or code');
    const policy = await currentPolicy(app.db, t.realmId);
    if (body.code !== undefined) {
      if (!emailCodeAllowed(policy)) throw noEmailCode();
      return { kind: 'code', code: body.code };
    }
    const name = flowSetting(policy, 'challenge_provider');
    const provider = typeof name === 'string' ? app.challengeProviders.get(name) : undefined;
    if (!provider)
      throw new Problem(409, 'conflict', 'the realm names no challenge_provider the operator configured');
    return {
      kind: 'provider',
      passed: await verifyWithProvider(app, provider, body.providerResponse as string),
    };
  },
  async run(q, t, _body, ctx, prepared) {
    if (prepared.kind === 'code') {
      // No code out, an expired or used one, and a wrong one all fail alike.
      const sent = await liveChallenge(q, t, 'challenge', ctx.now);
      const ok =
        sent !== null &&
        sent.user_id === t.userId &&
        digestsMatch(sent.code_digest, challengeDigest(t, 'challenge', prepared.code));
      if (!ok) return proofFailed(q, t, ctx, 'challenge');
      await consumeChallenge(q, t.realmId, t.id, 'challenge', ctx.now);
    } else if (!prepared.passed) {
      return proofFailed(q, t, ctx, 'challenge');
    }
    await markChallengePassed(q, t.realmId, t.id);
    return { tx: t };
  },
};

/**
 * challenge/send {}: mails a challenge code to the account's email address (its primary one), when
 * the realm allows the emailed-code alternative. Sends are limited like every other code.
 */
export const challengeSendStep: Step<Record<string, never>> = {
  path: 'challenge/send',
  spendsBudgets: true,
  action: 'challenge',
  decode: object({}),
  async run(q, t, _body, ctx) {
    if (!emailCodeAllowed(ctx.policy)) throw noEmailCode();
    if (!ctx.facts.methods.mail)
      throw problem.unavailable('the emailed-code challenge needs a mail transport, and none is configured');
    const email = ctx.facts.user?.email;
    if (!email || !t.userId) throw new Problem(409, 'conflict', 'the account has no email address');
    await sendChallenge(q, t, ctx, {
      purpose: 'challenge',
      channel: 'email',
      destination: email,
      userId: t.userId,
    });
    return { tx: t };
  },
};
