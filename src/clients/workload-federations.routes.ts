// HTTP edge of a service client's workload federation rules (docs/workload-federation.md): add,
// list and remove, with the permission every clients route needs.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeBody, decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { actorOf, clientParam, WRITE } from './clients.routes.ts';
import { decodeWorkloadFederation } from './workload-federation.ts';
import type { StoredWorkloadRule } from './workload-federations.repo.ts';
import { addWorkloadRule, removeWorkloadRule, workloadRulesOf } from './workload-federations.service.ts';

type Params = { client: string };

export function presentWorkloadRule(clientId: string, r: StoredWorkloadRule) {
  return {
    id: r.id,
    client_id: clientId,
    name: r.name,
    issuer: r.issuer,
    audience: r.audience,
    jwks_uri: r.jwksUri,
    jwks: r.jwks,
    claims: r.claims,
    created_at: r.createdAt.toISOString(),
  };
}

export function registerWorkloadFederationRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const PATH = '/clients/:client/workload-federations';

  apiRoute<Params>(app, ctx, 'POST', PATH, WRITE, async ({ req, reply, realm, caller }) => {
    const clientId = clientParam(req.params.client);
    const input = decodeBody(decodeWorkloadFederation, req.body ?? {});
    const rule = await addWorkloadRule(
      { ...ctx, publicOrigin: ctx.config.server.publicOrigin, realmName: realm.name },
      clientId,
      input,
      { realmId: realm.id, actor: actorOf(caller), now: ctx.clock.now(), correlationId: String(req.id) },
    );
    return reply.code(201).send(presentWorkloadRule(clientId, rule));
  });

  apiRoute<Params>(app, ctx, 'GET', PATH, WRITE, async ({ req, realm }) => {
    const clientId = clientParam(req.params.client);
    const rules = await workloadRulesOf(ctx, realm.id, clientId);
    return { items: rules.map((r) => presentWorkloadRule(clientId, r)) };
  });

  apiRoute<Params & { rule: string }>(
    app,
    ctx,
    'DELETE',
    `${PATH}/:rule`,
    WRITE,
    async ({ req, reply, realm, caller }) => {
      decodeNoBody(req.body);
      const clientId = clientParam(req.params.client);
      const ruleId = req.params.rule;
      if (!/^wlf_[0-9a-z]{26}$/.test(ruleId)) throw problem.notFound('no such workload federation rule');
      await removeWorkloadRule(ctx, clientId, ruleId, {
        realmId: realm.id,
        actor: actorOf(caller),
        now: ctx.clock.now(),
        correlationId: String(req.id),
      });
      return reply.code(204).send();
    },
  );
}
