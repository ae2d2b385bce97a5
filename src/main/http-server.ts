// The public and internal listeners of one server process, and their graceful shutdown.
import type { FastifyInstance } from 'fastify';
import { registerJwks } from '../keys/jwks.routes.ts';
import { registerPublicHealth } from '../ops/health.routes.ts';
import { registerInternalRoutes } from '../ops/internal.routes.ts';
import { parseListen } from '../platform/config/load.ts';
import { buildEdge } from '../platform/http/app.ts';
import type { AppContext } from './context.ts';

export interface HttpServers {
  publicApp: FastifyInstance;
  internalApp: FastifyInstance;
  publicUrl: string;
  internalUrl: string;
  /** Drains (ready answers draining for server.drain_delay), then lets in-flight requests finish. */
  shutdown(): Promise<void>;
}

export function buildPublicApp(ctx: AppContext): FastifyInstance {
  const { limits } = ctx.config;
  const app = buildEdge({
    log: ctx.log,
    metrics: ctx.metrics,
    maxBodyBytes: limits.maxBodyBytes,
    maxHeaderBytes: limits.maxHeaderBytes,
    requestTimeoutMs: limits.requestTimeoutMs,
    maxInflight: limits.maxInflightRequests,
  });
  registerPublicHealth(app, {
    ...ctx,
    isDraining: () => ctx.draining,
    maxClockSkewMs: ctx.config.observability.maxClockSkewMs,
  });
  registerJwks(app, ctx.keyStore);
  return app;
}

export function buildInternalApp(ctx: AppContext): FastifyInstance {
  const { limits, observability } = ctx.config;
  const app = buildEdge({
    log: ctx.log,
    metrics: ctx.metrics,
    maxBodyBytes: limits.maxBodyBytes,
    maxHeaderBytes: limits.maxHeaderBytes,
    requestTimeoutMs: limits.requestTimeoutMs,
  });
  registerInternalRoutes(app, {
    ...ctx,
    metricsEnabled: observability.metricsEnabled,
    maxTokenBytes: limits.maxTokenBytes,
  });
  return app;
}

const urlOf = (app: FastifyInstance): string => {
  const addr = app.server.address();
  if (!addr || typeof addr === 'string') return String(addr);
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${host}:${addr.port}`;
};

export async function startHttpServers(ctx: AppContext): Promise<HttpServers> {
  const publicApp = buildPublicApp(ctx);
  const internalApp = buildInternalApp(ctx);
  const pub = parseListen(ctx.config.server.listen);
  const internal = parseListen(ctx.config.server.internalListen);
  await publicApp.listen({ host: pub.host, port: pub.port });
  try {
    await internalApp.listen({ host: internal.host, port: internal.port });
  } catch (e) {
    await publicApp.close();
    throw e;
  }
  return {
    publicApp,
    internalApp,
    publicUrl: urlOf(publicApp),
    internalUrl: urlOf(internalApp),
    async shutdown() {
      ctx.draining = true;
      await new Promise((r) => setTimeout(r, ctx.config.server.drainDelayMs));
      await Promise.all([publicApp.close(), internalApp.close()]);
    },
  };
}
