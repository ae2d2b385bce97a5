// Abuse budgets of the sign-in steps that check a secret or send one (a step's `spendsBudgets`;
// docs/security.md, "Abuse budgets"): attempts per client network and per organization are spent
// before a proof is checked or a code or link is sent; the account's attempt is spent before too
// and given back unless the proof failed, so only failures use it. A spent budget answers 429
// rate_limited with Retry-After until its window ends: budgets slow guessing and mail floods
// down, they never lock the account.
import { isIP } from 'node:net';
import { type Budget, spendBudgets } from '../platform/abuse-budget.ts';
import { Problem } from '../platform/http/problem.ts';
import { findUserByIdentifier, identifierTypeOf } from '../users/index.ts';
import type { SigninDeps } from './signin.deps.ts';
import type { SigninTx } from './transaction.ts';

/** A client's network: the /24 of an IPv4 address, the /64 of an IPv6 one. */
export function networkOf(ip: string | null | undefined): string | null {
  if (!ip) return null;
  const v4 = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  if (isIP(v4) === 4) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (isIP(ip) !== 6) return null;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The account a proof is about: its id when known, else the identifier typed (unknown accounts too). */
export function accountKey(t: Pick<SigninTx, 'userId' | 'identifier'>): string | null {
  if (t.userId) return `usr:${t.userId}`;
  return t.identifier ? `id:${t.identifier.trim().toLowerCase()}` : null;
}

/** The account a proof names: a typed identifier is resolved, so every alias shares one budget. */
async function namedAccount(app: SigninDeps, t: SigninTx, identifier: string | null): Promise<string | null> {
  if (identifier === null) return accountKey(t);
  const user = await findUserByIdentifier(app.db, t.realmId, identifierTypeOf(identifier), identifier);
  return accountKey({ userId: user?.id ?? null, identifier });
}

const accountBudget = (app: SigninDeps, realmId: string, key: string): Budget => ({
  bucket: `signin:acct:${realmId}:${key}`,
  limit: app.config.security.budgets.accountFailures,
  windowMs: app.config.security.budgets.accountWindowMs,
});

const rateLimited = (app: SigninDeps, retryAfterSeconds: number) => {
  app.metrics.rateLimited.inc({ surface: 'signin' });
  return new Problem(429, 'rate_limited', 'too many sign-in attempts; try again later', undefined, {
    'retry-after': String(retryAfterSeconds),
  });
};

/**
 * Before a proof or a send: one attempt spent on the network, organization and account budgets in
 * one statement (so concurrent guesses cannot all pass a check first). The returned function gives
 * the account's attempt back when the step did not fail a proof, so only failures use the account
 * budget.
 */
export async function enforceSigninBudgets(
  app: SigninDeps,
  t: SigninTx,
  network: string | null,
  identifier: string | null,
): Promise<() => Promise<void>> {
  const b = app.config.security.budgets;
  const now = app.clock.now();
  const spend: Budget[] = [];
  if (network)
    spend.push({ bucket: `signin:net:${network}`, limit: b.networkAttempts, windowMs: b.networkWindowMs });
  const org = t.organizationId ?? t.organization;
  if (org)
    spend.push({
      bucket: `signin:org:${t.realmId}:${org}`,
      limit: b.organizationAttempts,
      windowMs: b.organizationWindowMs,
    });
  const key = await namedAccount(app, t, identifier);
  const account = key ? accountBudget(app, t.realmId, key) : null;
  if (account) spend.push(account);
  const verdict = await spendBudgets(app.db, spend, now);
  if (!verdict.ok) throw rateLimited(app, verdict.retryAfterSeconds);
  return async () => {
    if (account) await spendBudgets(app.db, [account], now, -1);
  };
}
