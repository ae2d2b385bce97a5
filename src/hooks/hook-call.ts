// Calling a realm's hooks (docs/hooks.md). Never inside a database transaction: the caller reads
// what the hook needs, calls, and only then opens its transaction. The active hooks of a kind that
// apply to the client are called at once, each within its own timeout_ms, so the whole costs at
// most the longest of them. Every call goes through the egress guard of the hook (as a webhook
// delivery does), is signed with the webhook scheme (document 2, Authentication 4-5), reads at most
// MAX_ANSWER_BYTES of the answer and counts in service_hook_calls_total{kind,outcome}.
import type { Clock } from '../platform/clock.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { Logger } from '../platform/log.ts';
import type { OutboundHttp, OutboundResult } from '../platform/net/outbound-http.ts';
import {
  type DeliveryPolicy,
  guardFor,
  openSigningSecrets,
  residencyProblem,
  signatureHeader,
} from '../webhooks/index.ts';
import {
  type Answer,
  type HookOutcome,
  MAX_ANSWER_BYTES,
  mergeClaims,
  readAnswer,
  type TokenClaims,
} from './hook-answer.ts';
import { activeHooksFor, type HookKind, type HookRow } from './hooks.repo.ts';
import { hookSecretAad } from './hooks.service.ts';

export const HOOK_USER_AGENT = 'ProudAuth-Hooks/1';

export interface HookCallDeps {
  db: Db;
  keyring: RootKeyring | null;
  outbound: OutboundHttp;
  policy: DeliveryPolicy;
  clock: Clock;
  /** Counts service_hook_calls_total. */
  countCall?: (kind: HookKind, outcome: HookOutcome) => void;
  log?: Logger;
}

export interface HookPoint {
  realmId: string;
  /** The client the registration, token or sign-in is for. */
  clientId: string | null;
  /** The realm row's hook_kinds where it was read: a kind not in it has no hook to call. */
  kindsInUse?: readonly string[] | undefined;
  /**
   * What the hook is told, or how to read it: read only when a hook applies, so a realm without
   * hooks pays one query and no more; null calls nothing.
   */
  data: HookData | (() => Promise<HookData | null>);
}

export type HookData = Record<string, unknown>;

interface Called {
  hook: HookRow;
  outcome: HookOutcome;
  answer: Answer | null;
}

/** Secrets that sign now: the current one, and the previous one during its 24 hours. */
function signingSecrets(keyring: RootKeyring, h: HookRow, now: Date): string[] {
  const sealed = {
    current: h.secret_sealed,
    previous: h.previous_secret_sealed,
    previousUntil: h.previous_secret_expires_at,
  };
  return openSigningSecrets(keyring, 'hook-secret', sealed, hookSecretAad(h.realm_id, h.id), now);
}

function outcomeOf(r: OutboundResult): HookOutcome | null {
  if (r.kind === 'timeout') return 'timeout';
  if (r.kind === 'egress_denied') return 'egress_denied';
  if (r.kind === 'network_error') return 'network_error';
  if (r.status < 200 || r.status > 299) return 'http_error';
  // An answer that filled the whole allowance may have been cut: not an answer.
  if (r.bytesRead >= MAX_ANSWER_BYTES) return 'invalid_response';
  return null;
}

async function callOne(deps: HookCallDeps, hook: HookRow, p: HookPoint, data: HookData): Promise<Called> {
  const now = deps.clock.now();
  const id = newId('hkc', now.getTime());
  const timestamp = Math.floor(now.getTime() / 1000);
  const body = JSON.stringify({
    id,
    type: hook.kind,
    hook_id: hook.id,
    realm_id: p.realmId,
    occurred_at: now.toISOString(),
    data: { client_id: p.clientId, ...data },
  });
  let result: OutboundResult;
  try {
    if (!deps.keyring) throw new Error('no root key to open the hook secret');
    const signature = signatureHeader(signingSecrets(deps.keyring, hook, now), id, timestamp, body);
    result = residencyProblem(hook.url, deps.policy)
      ? { kind: 'egress_denied', reason: 'residency' }
      : await deps.outbound.post({
          url: hook.url,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            'user-agent': HOOK_USER_AGENT,
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signature,
          },
          body,
          guard: guardFor(deps.policy, hook.allow_private_network),
          timeoutMs: hook.timeout_ms,
          maxResponseBytes: MAX_ANSWER_BYTES,
          keepBody: true,
        });
  } catch (err) {
    // A secret sealed under a root key no longer configured: the call fails, nothing is logged of it.
    deps.log?.warn({ hook: hook.id, err: String(err) }, 'hook call failed before it was sent');
    result = { kind: 'network_error', code: 'unsigned' };
  }
  const failed = outcomeOf(result);
  let called: Called;
  if (failed || result.kind !== 'response')
    called = { hook, outcome: failed ?? 'network_error', answer: null };
  else {
    const answer = readAnswer(hook.kind, (result.body ?? Buffer.alloc(0)).toString('utf8'));
    const outcome = answer.kind === 'invalid' ? 'invalid_response' : answer.kind === 'deny' ? 'denied' : 'ok';
    called = { hook, outcome, answer };
  }
  deps.countCall?.(hook.kind, called.outcome);
  return called;
}

async function callAll(deps: HookCallDeps, kind: HookKind, p: HookPoint): Promise<Called[]> {
  if (p.kindsInUse && !p.kindsInUse.includes(kind)) return [];
  const hooks = await activeHooksFor(deps.db, p.realmId, kind, p.clientId);
  if (hooks.length === 0) return [];
  const data = typeof p.data === 'function' ? await p.data() : p.data;
  if (data === null) return [];
  return Promise.all(hooks.map((h) => callOne(deps, h, p, data)));
}

/** A call that did not answer as its kind asks, from a hook that refuses when that happens. */
const failsClosed = (c: Called) =>
  c.outcome !== 'ok' && c.outcome !== 'denied' && c.hook.failure_mode === 'fail_closed';

export type RegistrationVerdict =
  | { kind: 'allow' }
  | { kind: 'deny'; hookId: string; reason: string | null }
  | { kind: 'unavailable'; hookId: string };

export async function beforeRegistration(deps: HookCallDeps, p: HookPoint): Promise<RegistrationVerdict> {
  const called = await callAll(deps, 'before_registration', p);
  for (const c of called)
    if (c.answer?.kind === 'deny') return { kind: 'deny', hookId: c.hook.id, reason: c.answer.reason };
  const closed = called.find(failsClosed);
  return closed ? { kind: 'unavailable', hookId: closed.hook.id } : { kind: 'allow' };
}

export type TokenVerdict = { kind: 'claims'; claims: TokenClaims } | { kind: 'unavailable'; hookId: string };

export async function beforeTokenIssuance(deps: HookCallDeps, p: HookPoint): Promise<TokenVerdict> {
  const called = await callAll(deps, 'before_token_issuance', p);
  const closed = called.find(failsClosed);
  if (closed) return { kind: 'unavailable', hookId: closed.hook.id };
  const claims = called.flatMap((c) =>
    c.answer?.kind === 'allow' && c.answer.claims ? [c.answer.claims] : [],
  );
  return { kind: 'claims', claims: mergeClaims(claims) };
}

/** A notification: its answer changes nothing, and a failure is only counted and logged. */
export async function afterSignIn(deps: HookCallDeps, p: HookPoint): Promise<void> {
  try {
    await callAll(deps, 'after_sign_in', p);
  } catch (err) {
    deps.log?.warn({ err: String(err) }, 'after_sign_in hooks could not be called');
  }
}
