// The decision API under /api/v1/realms/{realm}/authorization (spec doc 1, Resources, grants and
// decisions; docs/authorization.md): check, check-batch and list-objects, each for a caller
// holding realm.authorization.check.
import type { FastifyInstance } from 'fastify';
import { apiRoute } from '../authz/api-route.ts';
import type { AppContext } from '../main/context.ts';
import { decodeBatch, decodeCheck, decodeListObjects } from './decisions.decode.ts';
import { decide } from './evaluate.ts';
import { listObjects } from './list-objects.ts';
import { parseEngineTable } from './policy-engine.ts';

export function registerDecisionRoutes(app: FastifyInstance, ctx: AppContext): void {
  // A bad engine table stops the server at startup rather than failing decisions later.
  const engines = parseEngineTable(ctx.config.authorization.policyEngines);
  const check = { audience: 'admin', permissions: ['realm.authorization.check'] } as const;
  const maxTokenBytes = ctx.config.limits.maxTokenBytes;

  apiRoute(app, ctx, 'POST', '/authorization/check', check, async ({ req, realm }) => {
    const item = decodeCheck(req.body, maxTokenBytes);
    const [answer] = await decide({ app: ctx, realm, engines }, [item]);
    return answer;
  });

  apiRoute(app, ctx, 'POST', '/authorization/check-batch', check, async ({ req, realm }) => {
    const items = decodeBatch(req.body, maxTokenBytes);
    return { results: await decide({ app: ctx, realm, engines }, items) };
  });

  apiRoute(app, ctx, 'POST', '/authorization/list-objects', check, async ({ req, realm }) => {
    const input = decodeListObjects(req.body, maxTokenBytes);
    return listObjects({ app: ctx, realm, engines }, input);
  });
}
