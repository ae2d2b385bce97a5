// The decision API under /api/v1/realms/{realm}/authorization (spec doc 1, Resources, grants and
// decisions; docs/authorization.md): check, check-batch and list-objects, each for a caller
// holding realm.authorization.check.
import type { FastifyInstance } from 'fastify';
import { apiRoute, apiRouteSharingLiveCheck, type SharedLiveCheckCall } from '../authz/api-route.ts';
import type { AppContext } from '../main/context.ts';
import type { RealmRow } from '../realms/realm.repo.ts';
import { decodeBatch, decodeCheck, decodeListObjects } from './decisions.decode.ts';
import { decide } from './evaluate.ts';
import type { DecisionDeps } from './evaluated.ts';
import { listObjects } from './list-objects.ts';
import { parseEngineTable } from './policy-engine.ts';

export function registerDecisionRoutes(app: FastifyInstance, ctx: AppContext): void {
  // A bad engine table stops the server at startup rather than failing decisions later.
  const engines = parseEngineTable(ctx.config.authorization.policyEngines);
  const check = { audience: 'admin', permissions: ['realm.authorization.check'] } as const;
  const maxTokenBytes = ctx.config.limits.maxTokenBytes;
  const depsOf = (realm: RealmRow, liveChecks: SharedLiveCheckCall<object>['liveChecks']): DecisionDeps => ({
    app: ctx,
    realm,
    engines,
    liveChecks: async (facts) => (await liveChecks(facts)).lives,
  });

  // The caller's live check rides in the decision's own statement: one round trip per call.
  apiRouteSharingLiveCheck(
    app,
    ctx,
    'POST',
    '/authorization/check',
    check,
    async ({ req, realm, liveChecks }) => {
      const item = decodeCheck(req.body, maxTokenBytes);
      const [answer] = await decide(depsOf(realm, liveChecks), [item]);
      return answer;
    },
  );

  apiRouteSharingLiveCheck(
    app,
    ctx,
    'POST',
    '/authorization/check-batch',
    check,
    async ({ req, realm, liveChecks }) => {
      const items = decodeBatch(req.body, maxTokenBytes);
      return { results: await decide(depsOf(realm, liveChecks), items) };
    },
  );

  apiRoute(app, ctx, 'POST', '/authorization/list-objects', check, async ({ req, realm }) => {
    const input = decodeListObjects(req.body, maxTokenBytes);
    return listObjects({ app: ctx, realm, engines }, input);
  });
}
