// The failure budgets of the endpoints that authenticate clients (decision D23, docs/security.md
// "Abuse budgets"): failed client authentication per presented client_id and per client network,
// at the token, introspection and revocation endpoints alike (one secret, three places to guess
// it), and invalid_grant answers per client at the token endpoint. A spent budget answers 429
// slow_down with Retry-After before any credential or grant is checked. Only failures write; a
// request that succeeds pays two map look-ups (platform/abuse-budget.ts, FailureBudgets).
import { OAuthError, oauthError } from '../kernel/oauth-error.ts';
import { type Budget, type BudgetVerdict, FailureBudgets } from '../platform/abuse-budget.ts';
import type { Queryable } from '../platform/db/db.ts';
import type { ApiDeps } from './api.deps.ts';

/** Who a request's failures count against: the realm, the client_id it named, its network. */
export interface FailureSubject {
  realmId: string;
  clientId: string | null;
  /** Read only when a budget is looked at (a getter may work it out then). */
  readonly network: string | null;
}

type Deps = Pick<ApiDeps, 'config' | 'metrics'>;

export class ClientFailureBudgets {
  private readonly known = new FailureBudgets();
  private readonly deps: Deps;

  constructor(deps: Deps) {
    this.deps = deps;
  }

  private authBudgets(s: FailureSubject): Budget[] {
    const b = this.deps.config.security.budgets;
    const out: Budget[] = [];
    if (s.clientId !== null)
      out.push({
        bucket: `clientauth:client:${s.realmId}:${s.clientId}`,
        limit: b.clientAuthFailures,
        windowMs: b.clientAuthWindowMs,
      });
    if (s.network !== null)
      out.push({
        bucket: `clientauth:net:${s.network}`,
        limit: b.networkAuthFailures,
        windowMs: b.networkAuthWindowMs,
      });
    return out;
  }

  private grantBudget(realmId: string, clientId: string): Budget {
    const b = this.deps.config.security.budgets;
    return {
      bucket: `token:invalid_grant:${realmId}:${clientId}`,
      limit: b.clientInvalidGrants,
      windowMs: b.clientInvalidGrantWindowMs,
    };
  }

  private refuse(surface: string, verdict: BudgetVerdict): void {
    if (verdict.ok) return;
    this.deps.metrics.rateLimited.inc({ surface });
    throw oauthError.slowDown(verdict.retryAfterSeconds, 'too many failed requests; slow down');
  }

  /**
   * Before any credential is checked: throws slow_down when this request would count against a
   * spent budget (its client_id, its network, and at the token endpoint the client's grants).
   */
  check(surface: string, s: FailureSubject, now: Date): void {
    if (!this.known.anySpent) return;
    const budgets = this.authBudgets(s);
    if (surface === 'token' && s.clientId !== null) budgets.push(this.grantBudget(s.realmId, s.clientId));
    this.refuse(surface, this.known.refusal(budgets, now));
  }

  /**
   * Counts a failure the request met (`failure`): failed client authentication, or at the token
   * endpoint invalid_grant. Answers slow_down instead when the budget was already spent before it,
   * else rethrows the failure; anything else is rethrown uncounted.
   */
  async counted(
    q: Queryable,
    surface: string,
    s: FailureSubject,
    failure: unknown,
    now: Date,
  ): Promise<never> {
    if (!(failure instanceof OAuthError)) throw failure;
    let budgets: Budget[] = [];
    if (failure.error === 'invalid_client') budgets = this.authBudgets(s);
    else if (failure.error === 'invalid_grant' && surface === 'token' && s.clientId !== null)
      budgets = [this.grantBudget(s.realmId, s.clientId)];
    if (budgets.length > 0) this.refuse(surface, await this.known.fail(q, budgets, now));
    throw failure;
  }
}

// One set per process and context (two in-process servers in a test keep their own knowledge).
const perContext = new WeakMap<Deps, ClientFailureBudgets>();

export function failureBudgetsOf(deps: Deps): ClientFailureBudgets {
  let budgets = perContext.get(deps);
  if (budgets === undefined) {
    budgets = new ClientFailureBudgets(deps);
    perContext.set(deps, budgets);
  }
  return budgets;
}
