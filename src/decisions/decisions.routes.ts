// The decision API under /api/v1/realms/{realm}/authorization (spec doc 1, Resources, grants and
// decisions; docs/authorization.md): check, check-batch and list-objects, each for a caller
// holding realm.authorization.check.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute, apiRouteSharingLiveCheck, type SharedLiveCheckCall } from '../api/api-route.ts';
import type { RealmRow } from '../realms/index.ts';
import { decodeBatch, decodeCheck, decodeListObjects } from './decisions.decode.ts';
import { decide } from './evaluate.ts';
import type { DecisionDeps } from './evaluated.ts';
import { listObjects } from './list-objects.ts';
import { parseEngineTable } from './policy-engine.ts';

/**
 * The decoded body; when it cannot be decoded, the caller is checked first, so only a caller
 * allowed to ask learns what is wrong with the request (403 before 400).
 */
async function decodedForCaller<T>(
  decode: () => T,
  liveChecks: SharedLiveCheckCall<object>['liveChecks'],
): Promise<T> {
  try {
    return decode();
  } catch (e) {
    await liveChecks([]);
    throw e;
  }
}

export function registerDecisionRoutes(app: FastifyInstance, ctx: ApiDeps): void {
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
      const item = await decodedForCaller(() => decodeCheck(req.body, maxTokenBytes), liveChecks);
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
      const items = await decodedForCaller(() => decodeBatch(req.body, maxTokenBytes), liveChecks);
      return { results: await decide(depsOf(realm, liveChecks), items) };
    },
  );

  apiRoute(app, ctx, 'POST', '/authorization/list-objects', check, async ({ req, realm }) => {
    const input = decodeListObjects(req.body, maxTokenBytes);
    return listObjects({ app: ctx, realm, engines }, input);
  });
}
