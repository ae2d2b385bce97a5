// What one valid check is known to be once the decision's statement has answered, and the
// assurance step (docs/authorization.md, evaluation step 5) that the local rules and the
// external policy engine both end with.

import type { Liveness, TokenFacts } from '../access/token-liveness.ts';
import type { RealmRow } from '../realms/index.ts';
import { type SubjectAssurance, scopeStepUp, sensitivityStepUp, storedScopes } from './assurance.ts';
import type { Obligation } from './decision.ts';
import type { CheckRequest } from './decisions.decode.ts';
import type { DecisionApiDeps } from './decisions.deps.ts';
import type { EngineTable } from './policy-engine.ts';
import type { SubjectToken } from './subject-token.ts';

export interface DecisionDeps {
  app: DecisionApiDeps;
  realm: RealmRow;
  engines: EngineTable;
  /**
   * Runs the subject tokens' live checks; the decision routes fold the caller's own check into
   * the same statement. Default: the live checks alone.
   */
  liveChecks?: (facts: readonly TokenFacts[]) => Promise<Liveness[]>;
}

/** Everything known about one valid check once the statement has answered. */
export interface Evaluated {
  request: CheckRequest;
  token: SubjectToken;
  live: Liveness;
  assurance: SubjectAssurance;
}

/** Step 5: the token's scope rules and the action's registered sensitivity. */
export function assuranceStepUp(e: Evaluated, recentWindowSeconds: number): Obligation | null {
  const scopes = storedScopes(e.live.decision?.resourceScopes);
  const fromScope = scopeStepUp(
    scopes,
    new Set(e.token.scopes),
    e.request.action,
    e.assurance,
    recentWindowSeconds,
  );
  if (fromScope) return fromScope;
  const sensitivity = e.live.decision?.sensitivities[e.request.action];
  return sensitivityStepUp(sensitivity, e.assurance, recentWindowSeconds);
}

/** The realm's policy_engine member, as the statement read it. */
export const policyEngineOf = (lives: readonly (Evaluated | null)[]): unknown =>
  lives.find((e) => e?.live.decision)?.live.decision?.policyEngine ?? null;
