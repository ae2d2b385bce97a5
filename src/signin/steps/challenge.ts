// challenge {provider_response} | {code}, and challenge/send (spec doc 1, endpoint table and
// authentication_flow outcome challenge): the provider response (a CAPTCHA-style token) is
// verified over HTTP, before the row lock, by the provider the realm names in
// authentication_flow.challenge_provider out of the operator's security.challenge_providers; a
// wrong one is a failed proof. The emailed-code alternative needs email delivery, which this build does
// not have yet: it answers 409.
import { object, optional, string } from '../../platform/http/decode.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { EgressGuard } from '../../platform/net/egress-guard.ts';
import { currentPolicy } from '../../realms/index.ts';
import { flowSetting } from '../flow-rules.ts';
import { markChallengePassed } from '../flow-state.repo.ts';
import type { ChallengeProvider, SigninDeps } from '../signin.deps.ts';
import { proofFailed } from './proof-failed.ts';
import type { Step } from './step.ts';

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

export const challengeStep: Step<{ providerResponse?: string; code?: string }, { passed: boolean }> = {
  path: 'challenge',
  action: 'challenge',
  decode,
  async prepare(app, t, body) {
    if ((body.providerResponse === undefined) === (body.code === undefined))
      throw problem.invalidRequest('send exactly one of provider_response or code');
    if (body.code !== undefined)
      throw new Problem(409, 'conflict', 'the emailed-code challenge is not available (no email delivery)');
    const name = flowSetting(await currentPolicy(app.db, t.realmId), 'challenge_provider');
    const provider = typeof name === 'string' ? app.challengeProviders.get(name) : undefined;
    if (!provider)
      throw new Problem(409, 'conflict', 'the realm names no challenge_provider the operator configured');
    return { passed: await verifyWithProvider(app, provider, body.providerResponse as string) };
  },
  async run(q, t, _body, ctx, prepared) {
    if (!prepared.passed) return proofFailed(q, t, ctx, 'challenge');
    await markChallengePassed(q, t.realmId, t.id);
    return { tx: t };
  },
};

export const challengeSendStep: Step<Record<string, never>> = {
  path: 'challenge/send',
  action: 'challenge',
  decode: object({}),
  async run() {
    throw new Problem(409, 'conflict', 'the emailed-code challenge is not available (no email delivery)');
  },
};
