// Public health endpoints (spec doc 2, Health, status and metrics).
import type { FastifyInstance } from 'fastify';
import { type ReadinessContext, readiness } from './readiness.ts';

export function registerPublicHealth(app: FastifyInstance, ctx: ReadinessContext): void {
  // Liveness never touches a dependency: it only says the process answers.
  app.get('/health/live', async (_req, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/health/ready', async (_req, reply) => {
    const r = await readiness(ctx);
    return reply.code(r.httpStatus).header('cache-control', 'no-store').send(r.body);
  });
}
