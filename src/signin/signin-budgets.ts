// Abuse budgets of the sign-in steps that check a secret or send one (a step's `spendsBudgets`;
// docs/security.md, "Abuse budgets"): attempts per client network and per organization are spent
// before a proof is checked or a code or link is sent; the account's attempt is spent before too
// and given back unless the proof failed, so only failures use it. A spent budget answers 429
// rate_limited with Retry-After until its window ends: budgets slow guessing and mail floods
// down, they never lock the account. Proofs of the mailbox (emailed codes, magic links, reset
// codes) keep an account budget of their own, so a password budget spent by someone guessing
// leaves the owner a way in through their mail; the 429 of the password step names those ways
// (`alternatives`, docs/signin.md "A spent password budget").
import { type Budget, budgetAdjustment, spendBudgets } from '../platform/abuse-budget.ts';
import type { Companion } from '../platform/db/companions.ts';
import { Problem } from '../platform/http/problem.ts';
import { currentPolicy } from '../realms/index.ts';
import { findUserByIdentifier, identifierTypeOf } from '../users/index.ts';
import { loginMethods } from './facts.ts';
import type { ActionType } from './next-actions.types.ts';
import type { SigninDeps } from './signin.deps.ts';
import type { SigninTx } from './transaction.ts';

// A client's network (/24, /64); kept here for the sign-in steps that import it with the budgets.
export { networkOf } from '../platform/http/client-address.ts';

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

/** Which account budget a step spends: the mailbox proofs' own, or the one of every other proof. */
export type AccountBudgetKind = 'proof' | 'mailbox';

const accountBudget = (app: SigninDeps, realmId: string, key: string, kind: AccountBudgetKind): Budget => ({
  bucket: `signin:${kind === 'mailbox' ? 'mail' : 'acct'}:${realmId}:${key}`,
  limit: app.config.security.budgets.accountFailures,
  windowMs: app.config.security.budgets.accountWindowMs,
});

const rateLimited = (app: SigninDeps, retryAfterSeconds: number, alternatives: ActionType[]) => {
  app.metrics.rateLimited.inc({ surface: 'signin' });
  return new Problem(
    429,
    'rate_limited',
    'too many sign-in attempts; try again later',
    alternatives.length > 0 ? { alternatives } : undefined,
    { 'retry-after': String(retryAfterSeconds) },
  );
};

/**
 * The mailbox ways the realm offers for an email identifier (never whether an account has it):
 * what is left when only the account's proof budget is spent.
 */
async function mailboxWays(app: SigninDeps, t: SigninTx, identifier: string | null): Promise<ActionType[]> {
  const who = identifier ?? t.identifier;
  if (!who || identifierTypeOf(who) !== 'email') return [];
  const m = loginMethods({ config: app.config, policy: await currentPolicy(app.db, t.realmId) });
  const ways: ActionType[] = [];
  if (m.emailOtp) ways.push('email_otp');
  if (m.magicLink) ways.push('magic_link');
  return ways;
}

/**
 * The account's attempt, given back when the step did not fail a proof: by a statement joined to
 * the step's own last write (`part`, then `given` once that committed), or by `run` after it.
 */
export class AttemptRefund {
  given = false;
  private readonly app: SigninDeps;
  private readonly account: Budget | null;
  private readonly now: Date;

  constructor(app: SigninDeps, account: Budget | null, now: Date) {
    this.app = app;
    this.account = account;
    this.now = now;
  }

  get part(): Companion | null {
    return this.account ? budgetAdjustment(this.account, this.now, -1) : null;
  }

  async run(): Promise<void> {
    if (this.given || !this.account) return;
    this.given = true;
    await spendBudgets(this.app.db, [this.account], this.now, -1);
  }
}

/**
 * Before a proof or a send: one attempt spent on the network, organization and account budgets in
 * one statement (so concurrent guesses cannot all pass a check first). The returned refund gives
 * the account's attempt back when the step did not fail a proof, so only failures use the account
 * budget.
 */
export async function enforceSigninBudgets(
  app: SigninDeps,
  t: SigninTx,
  network: string | null,
  identifier: string | null,
  kind: AccountBudgetKind = 'proof',
): Promise<AttemptRefund> {
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
  const account = key ? accountBudget(app, t.realmId, key, kind) : null;
  if (account) spend.push(account);
  const verdict = await spendBudgets(app.db, spend, now);
  if (!verdict.ok) {
    // Only the account's proof budget is spent: its mail is still a way in.
    const accountOnly = account !== null && verdict.refused?.every((b) => b === account.bucket) === true;
    const ways = kind === 'proof' && accountOnly ? await mailboxWays(app, t, identifier) : [];
    throw rateLimited(app, verdict.retryAfterSeconds, ways);
  }
  return new AttemptRefund(app, account, now);
}
