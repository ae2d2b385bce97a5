// The internal listener: liveness, Prometheus metrics and the operator status object, guarded by
// server.metrics_token when one is configured (spec doc 2, Health, status and metrics).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, secretsEqual } from '../platform/http/bearer.ts';
import { problem } from '../platform/http/problem.ts';
import { sendProblem } from '../platform/http/problem-mapper.ts';
import type { Metrics } from '../platform/metrics.ts';
import { operatorStatus, type StatusContext } from './status.ts';

/** How /metrics and /status are protected; `unresolvable` refuses everyone. */
export type MetricsAuth = { kind: 'open' } | { kind: 'token'; token: string } | { kind: 'unresolvable' };

export interface InternalContext extends StatusContext {
  metrics: Metrics;
  metricsEnabled: boolean;
  metricsAuth: MetricsAuth;
  maxTokenBytes: number;
}

function authorized(ctx: InternalContext, req: FastifyRequest): boolean {
  const auth = ctx.metricsAuth;
  if (auth.kind === 'open') return true;
  if (auth.kind === 'unresolvable') return false;
  const presented = bearerToken(req.headers.authorization, ctx.maxTokenBytes);
  return presented !== null && secretsEqual(presented, auth.token);
}

const refuse = (reply: FastifyReply) =>
  sendProblem(
    reply,
    problem.unauthorized('a valid metrics bearer token is required', { 'www-authenticate': 'Bearer' }),
  );

export function registerInternalRoutes(app: FastifyInstance, ctx: InternalContext): void {
  app.get('/health/live', async (_req, reply) => reply.code(200).send());

  app.get('/metrics', async (req, reply) => {
    if (!ctx.metricsEnabled) return sendProblem(reply, problem.notFound('metrics are disabled'));
    if (!authorized(ctx, req)) return refuse(reply);
    const text = await ctx.metrics.render();
    return reply
      .header('content-type', ctx.metrics.contentType)
      .header('cache-control', 'no-store')
      .send(text);
  });

  app.get('/status', async (req, reply) => {
    if (!authorized(ctx, req)) return refuse(reply);
    return reply.header('cache-control', 'no-store').send(await operatorStatus(ctx));
  });
}
