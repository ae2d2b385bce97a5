// challenge {provider_response} | {code}, and challenge/send (spec doc 1, endpoint table and
// authentication_flow outcome challenge): the provider response (a CAPTCHA-style token) is
// verified over HTTP with authentication_flow.challenge_provider before the row lock; a wrong
// one is a failed proof. The emailed-code alternative needs email delivery, which this build does
// not have yet: it answers 409.
import { object, optional, string } from '../../platform/http/decode.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { currentPolicy } from '../../realms/index.ts';
import { flowSetting } from '../flow-rules.ts';
import { markChallengePassed } from '../flow-state.repo.ts';
import { proofFailed } from './proof-failed.ts';
import type { Step } from './step.ts';

const PROVIDER_TIMEOUT_MS = 5000;

interface Provider {
  url: string;
  secret?: string;
}

function providerOf(v: unknown): Provider | null {
  if (!v || typeof v !== 'object') return null;
  const p = v as Record<string, unknown>;
  if (typeof p.url !== 'string' || !/^https?:\/\//.test(p.url)) return null;
  return { url: p.url, ...(typeof p.secret === 'string' ? { secret: p.secret } : {}) };
}

/**
 * Asks the provider whether the response is valid: POST {response, secret} as JSON, success when
 * it answers 2xx with {success: true}. Outbound HTTP uses Node's fetch (no egress guard yet).
 */
async function verifyWithProvider(p: Provider, response: string): Promise<boolean> {
  try {
    const res = await fetch(p.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response, ...(p.secret ? { secret: p.secret } : {}) }),
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
      redirect: 'error',
    });
    if (!res.ok) return false;
    const body = (await res.json()) as { success?: unknown };
    return body.success === true;
  } catch {
    // An unreachable or slow provider fails closed: the challenge is not passed.
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
    const provider = providerOf(flowSetting(await currentPolicy(app.db, t.realmId), 'challenge_provider'));
    if (!provider) throw new Problem(409, 'conflict', 'the realm has no challenge_provider');
    return { passed: await verifyWithProvider(provider, body.providerResponse as string) };
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
