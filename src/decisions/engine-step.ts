// Step 7 of the evaluation order (docs/authorization.md, "External policy engine"): the realm's
// policy_engine, when it names one. restrict asks only about what local rules allow and can only
// deny it; decide asks about every check that got past the token, organization and project steps,
// and its answer replaces the local roles or relationships (the token's assurance rules still
// apply to a yes). Engine failures follow on_error: deny, or keep the local answer.
import { type Outcome, outcome } from './decision.ts';
import type { CheckItem } from './decisions.decode.ts';
import { assuranceStepUp, type DecisionDeps, type Evaluated, policyEngineOf } from './evaluated.ts';
import type { LocalStep } from './local-rules.ts';
import { askEngine, mapLimited, realmEngine } from './policy-engine.ts';

/** Engine requests in flight at once for one batch. */
const ENGINE_CONCURRENCY = 16;

function engineInput(deps: DecisionDeps, e: Evaluated, local: Outcome) {
  const r = e.request;
  return {
    realm: deps.realm.name,
    subject: {
      type: e.live.subjectType,
      id: e.token.subject,
      client_id: e.token.clientId,
      org_id: e.token.orgId,
      scopes: e.token.scopes,
      acr: e.token.acr,
      amr: e.token.amr,
      auth_time: e.token.authTime,
    },
    action: r.action,
    resource: {
      type: r.resource.type,
      id: r.resource.id,
      org_id: r.resource.orgId,
      project_id: r.resource.projectId,
    },
    context: r.context,
    local: { allowed: local.code === 'ALLOWED', reason_code: local.code },
  };
}

export async function applyEngine(
  deps: DecisionDeps,
  items: readonly CheckItem[],
  evaluated: readonly (Evaluated | null)[],
  steps: readonly (LocalStep | null)[],
  locals: readonly Outcome[],
  recentWindowSeconds: number,
): Promise<Outcome[]> {
  const policy = policyEngineOf(evaluated);
  if (policy === null) return [...locals];
  const engine = realmEngine(policy, deps.engines);
  // Past the token, organization and project steps, with a valid request.
  const eligible = items.map((item, i) => item.ok && evaluated[i] !== null && steps[i]?.kind !== 'final');
  if (engine === null) return [...locals];
  if (engine === 'misconfigured') {
    deps.app.log.warn({ realm: deps.realm.name }, 'realm policy_engine names no configured engine');
    return locals.map((o, i) => (eligible[i] ? outcome('EVALUATION_ERROR') : o));
  }
  const asked = locals.map((o, i) => eligible[i] && (engine.mode === 'decide' || o.code === 'ALLOWED'));
  const timeout = deps.app.config.authorization.policyEngineTimeoutMs;
  const indexes = asked.flatMap((a, i) => (a ? [i] : []));
  const answers = await mapLimited(indexes, ENGINE_CONCURRENCY, (i) =>
    askEngine(
      engine.endpoint,
      engineInput(deps, evaluated[i] as Evaluated, locals[i] as Outcome),
      timeout,
      deps.app.log,
    ),
  );
  const out = [...locals];
  indexes.forEach((i, k) => {
    const answer = answers[k];
    const local = locals[i] as Outcome;
    if (answer === 'unavailable') {
      out[i] = engine.onError === 'local' ? local : outcome('EXTERNAL_POLICY_UNAVAILABLE');
    } else if (!answer) {
      out[i] = outcome('EXTERNAL_POLICY_DENIED');
    } else if (engine.mode === 'decide') {
      const stepUp = assuranceStepUp(evaluated[i] as Evaluated, recentWindowSeconds);
      out[i] = stepUp ? outcome('STEP_UP_REQUIRED', stepUp) : outcome('ALLOWED');
    }
  });
  return out;
}
