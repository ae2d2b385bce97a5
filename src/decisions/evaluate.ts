// Answers decision requests, one or a batch (spec doc 1, Authorization decision; docs/
// authorization.md, "Evaluation order"). Cost: one offline verification per distinct subject
// token (signatures are cached), one statement for the stored claims of all opaque subject
// tokens, one statement for the live checks of every distinct (token,
// organization, project) in the request (and once more for the tokens asked about a type that
// became a relationship type since this process last read the realm's types), one statement per
// level of any relationship graph walked, and one engine request per check when the realm uses
// an external policy engine.
import {
  checkLivenessMany,
  type DecisionQuery,
  type Liveness,
  type TokenFacts,
} from '../access/token-liveness.ts';
import { Problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { evaluateChecks, type GraphCheck, type GraphOutcome } from '../relationships/graph.ts';
import { tuplesOfObjects } from '../relationships/index.ts';
import { type DecisionResponse, type Outcome, outcome, policyVersion, present } from './decision.ts';
import type { CheckItem } from './decisions.decode.ts';
import { applyEngine } from './engine-step.ts';
import { assuranceStepUp, type DecisionDeps, type Evaluated } from './evaluated.ts';
import { assuranceOf, effectiveOrg, type LocalStep, localStep } from './local-rules.ts';
import { livenessFactsOf, resolveSubjectTokens, type SubjectToken } from './subject-token.ts';
import { knownTypes, rememberTypes, type TypeSet } from './type-cache.ts';

interface Group {
  facts: TokenFacts;
  actions: Set<string>;
  types: Set<string>;
  orgs: Set<string>;
  projects: Set<string>;
}

const GRAPH_OUTCOME: Record<GraphOutcome, Outcome> = {
  allowed: outcome('ALLOWED'),
  denied: outcome('NOT_PERMITTED'),
  organization_mismatch: outcome('ORGANIZATION_MISMATCH'),
  depth_exceeded: outcome('EVALUATION_ERROR'),
  reads_exceeded: outcome('EVALUATION_ERROR'),
  cycle: outcome('EVALUATION_ERROR'),
};

type LiveChecks = (facts: readonly TokenFacts[]) => Promise<Liveness[]>;

export async function decide(deps: DecisionDeps, items: readonly CheckItem[]): Promise<DecisionResponse[]> {
  const now = deps.app.clock.now();
  // The caller's own live check may ride in this statement (apiRouteSharingLiveCheck); no
  // answer leaves before it has passed.
  let callerChecked = false;
  const liveChecks: LiveChecks = async (facts) => {
    const lives = deps.liveChecks
      ? await deps.liveChecks(facts)
      : await checkLivenessMany(deps.app.db, facts, now);
    callerChecked = true;
    return lives;
  };
  try {
    return await decideAll(deps, items, now, liveChecks);
  } catch (e) {
    // A refused caller sees its problem; one never checked is checked before any answer.
    if (e instanceof Problem) throw e;
    if (!callerChecked) await liveChecks([]);
    // Whatever failed, the caller gets a decision it must not cache, not a 500 (doc 1, reason codes).
    deps.app.log.error(
      { err: { name: (e as Error).name, message: (e as Error).message } },
      'decision failed',
    );
    const realmRow = deps.realm as RealmRow & { authz_revision?: number | string };
    const version = policyVersion(deps.realm.policy_revision, Number(realmRow.authz_revision ?? 0));
    return items.map(() => present(outcome('EVALUATION_ERROR'), version, null, now));
  }
}

async function decideAll(
  deps: DecisionDeps,
  items: readonly CheckItem[],
  now: Date,
  liveChecks: LiveChecks,
): Promise<DecisionResponse[]> {
  const { app, realm } = deps;
  const tokens = await resolveTokens(deps, items, now);

  // One live-check branch per distinct token: its roles come for every organization and project
  // the token's checks name, each holding tagged with its scope (local-rules.ts picks per check).
  const groups = new Map<string, Group>();
  const groupOf: (Group | null)[] = items.map((item) => {
    if (!item.ok) return null;
    const t = tokens.get(item.request.subjectToken);
    if (!t) return null;
    const r = item.request;
    let g = groups.get(r.subjectToken);
    if (!g) {
      g = {
        facts: { ...livenessFactsOf(realm.id, t), withRoles: true },
        actions: new Set(),
        types: new Set(),
        orgs: new Set(),
        projects: new Set(),
      };
      groups.set(r.subjectToken, g);
    }
    g.actions.add(r.action);
    g.types.add(r.resource.type);
    const org = effectiveOrg(t, r);
    if (org !== null) g.orgs.add(org);
    if (r.resource.projectId !== null) g.projects.add(r.resource.projectId);
    return g;
  });
  const known = knownTypes(realm.id);
  const list = [...groups.values()];
  for (const g of list) {
    g.facts.rolesOrgIds = [...g.orgs];
    g.facts.rolesProjectIds = [...g.projects];
    g.facts.decision = {
      actions: [...g.actions],
      resourceTypes: [...g.types],
      knownTypesRevision: known?.revision ?? null,
      // Types this process has not seen as relationship types are taken for role checks; the
      // statement still says which are, and relationshipFactsToo asks again when one is.
      rolesOnly: ![...g.types].some((t) => known?.types.has(t) === true),
    };
  }
  const lives = await relationshipFactsToo(
    deps,
    list.map((g) => g.facts),
    await liveChecks(list.map((g) => g.facts)),
    now,
  );
  const liveOf = new Map(list.map((g, i) => [g, lives[i] as Liveness]));

  const version = await versionOf(deps, lives);
  const types = typesOf(realm.id, lives, known);
  const nowSeconds = Math.floor(now.getTime() / 1000);

  const evaluated: (Evaluated | null)[] = items.map((item, i) => {
    const g = groupOf[i];
    if (!item.ok || !g) return null;
    const token = tokens.get(item.request.subjectToken) as SubjectToken;
    const live = liveOf.get(g) as Liveness;
    return { request: item.request, token, live, assurance: assuranceOf(token, live, nowSeconds) };
  });
  const steps: (LocalStep | null)[] = evaluated.map((e) =>
    e ? localStep(e.request, e.token, e.live, types, e.assurance) : null,
  );

  // Every graph check of the request walks together: one statement per level.
  const graphChecks: GraphCheck[] = [];
  const graphIndex = steps.map((s) => (s?.kind === 'graph' ? graphChecks.push(s.check) - 1 : -1));
  const graphAnswers =
    graphChecks.length > 0 && types
      ? await evaluateChecks(types.types, graphChecks, (keys, limit) =>
          tuplesOfObjects(app.db, realm.id, keys, limit),
        )
      : [];

  const recentWindow = Math.floor(app.config.security.recentAuthWindowMs / 1000);
  const locals: Outcome[] = items.map((item, i) => {
    const step = steps[i];
    const e = evaluated[i];
    if (!item.ok) return outcome('INVALID_REQUEST');
    if (!step || !e) return outcome('SUBJECT_TOKEN_INACTIVE');
    if (step.kind === 'final') return step.outcome;
    const base =
      step.kind === 'rbac' ? step.outcome : GRAPH_OUTCOME[graphAnswers[graphIndex[i] as number] ?? 'denied'];
    if (base.code !== 'ALLOWED') return base;
    const stepUp = assuranceStepUp(e, recentWindow);
    return stepUp ? outcome('STEP_UP_REQUIRED', stepUp) : base;
  });

  const finals = await applyEngine(deps, items, evaluated, steps, locals, recentWindow);
  return finals.map((o, i) => {
    const item = items[i] as CheckItem;
    const t = item.ok ? tokens.get(item.request.subjectToken) : null;
    // Support answers are asked again every time (docs/support-access.md): no cache lifetime.
    return present(o, version, t && t.supportGrantId === null ? t.expiresAt : null, now);
  });
}

/**
 * The live checks of tokens whose statement left the relationship facts out (DecisionQuery
 * rolesOnly) although an asked type is a relationship type (one defined since this process last
 * read the realm's types): run again with them, one more statement. The caller's own check was
 * in the first statement and is not repeated.
 */
async function relationshipFactsToo(
  deps: DecisionDeps,
  facts: readonly TokenFacts[],
  lives: Liveness[],
  now: Date,
): Promise<Liveness[]> {
  const again = facts.flatMap((f, i) =>
    f.decision?.rolesOnly === true && (lives[i]?.decision?.definedTypes.length ?? 0) > 0 ? [i] : [],
  );
  if (again.length === 0) return lives;
  const redone = await checkLivenessMany(
    deps.app.db,
    again.map((i) => {
      const f = facts[i] as TokenFacts;
      return { ...f, decision: { ...(f.decision as DecisionQuery), rolesOnly: false } };
    }),
    now,
  );
  const out = [...lives];
  again.forEach((i, k) => {
    out[i] = redone[k] as Liveness;
  });
  return out;
}

async function resolveTokens(deps: DecisionDeps, items: readonly CheckItem[], now: Date) {
  const distinct = [...new Set(items.flatMap((i) => (i.ok ? [i.request.subjectToken] : [])))];
  const resolved = await resolveSubjectTokens(deps.app, deps.realm, distinct, now);
  const out = new Map<string, SubjectToken>();
  distinct.forEach((t, i) => {
    const r = resolved[i];
    if (r) out.set(t, r);
  });
  return out;
}

async function versionOf(deps: DecisionDeps, lives: readonly Liveness[]): Promise<string> {
  const facts = lives.find((l) => l.decision !== null)?.decision;
  if (facts) return policyVersion(facts.policyRevision, facts.authzRevision);
  // No live check ran (every token was unreadable): the revisions alone.
  const r = await deps.app.db.query<{ policy_revision: number; authz_revision: string }>(
    'select policy_revision, authz_revision from realms where id = $1',
    [deps.realm.id],
  );
  const row = r.rows[0];
  return policyVersion(Number(row?.policy_revision ?? 0), Number(row?.authz_revision ?? 0));
}

function typesOf(realmId: string, lives: readonly Liveness[], known: TypeSet | undefined): TypeSet | null {
  for (const l of lives) {
    const d = l.decision;
    if (!d || d.definedTypes.length === 0) continue;
    if (d.types) return rememberTypes(realmId, d.authzRevision, d.types);
    if (known && known.revision === d.authzRevision) return known;
  }
  return null;
}
