// The SCIM 2.0 endpoints (RFC 7644) under /api/v1/realms/{realm}/scim/v2 (docs/scim.md). Their
// errors are SCIM error documents, not problems; bodies may be application/scim+json or
// application/json, at most 1 MiB (spec doc 2, Limits: SCIM).
import type { FastifyError, FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { toProblem } from '../platform/http/problem-mapper.ts';
import { parseStrictJson } from '../platform/http/strict-json.ts';
import { MAX_SCIM_BODY_BYTES, resourceTypes, schemas, serviceProviderConfig } from './scim-discovery.ts';
import { listResponse, scimRoute, sendScim } from './scim-edge.routes.ts';
import { ScimError, scimErrorOf, sendScimError } from './scim-error.ts';
import { registerScimGroupRoutes } from './scim-groups.routes.ts';
import { registerScimUserRoutes } from './scim-users.routes.ts';

export const SCIM_PREFIX = '/api/v1/realms/:realm/scim/v2';

function outcomeOf(status: number): string {
  if (status < 400) return 'success';
  if (status === 401) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  return status < 500 ? 'rejected' : 'error';
}

export function registerScimRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  app.register(
    async (scope) => {
      scope.addContentTypeParser('application/scim+json', { parseAs: 'buffer' }, (_req, body, done) => {
        try {
          done(null, (body as Buffer).length === 0 ? undefined : parseStrictJson(body as Buffer));
        } catch (e) {
          done(e as Error, undefined);
        }
      });
      scope.setErrorHandler((err: FastifyError, req, reply) => {
        const mapped = scimErrorOf(err);
        if (mapped) return sendScimError(reply, mapped);
        if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
          return sendScimError(
            reply,
            new ScimError(413, null, `a SCIM body has at most ${MAX_SCIM_BODY_BYTES} bytes`),
          );
        const p = toProblem(err, ctx.log, String(req.id), MAX_SCIM_BODY_BYTES);
        const scimType = p.status === 400 ? 'invalidSyntax' : null;
        return sendScimError(reply, new ScimError(p.status, scimType, p.detail ?? p.code, p.headers ?? {}));
      });
      scope.setNotFoundHandler((_req, reply) =>
        sendScimError(reply, new ScimError(404, null, 'no such endpoint')),
      );
      scope.addHook('onResponse', async (req, reply) => {
        const resource = (req.routeOptions.config as { scimResource?: string }).scimResource ?? 'unknown';
        ctx.metrics.directoryScimRequests.inc({
          resource,
          method: req.method,
          outcome: outcomeOf(reply.statusCode),
        });
      });

      scimRoute(
        scope,
        ctx,
        'GET',
        '/ServiceProviderConfig',
        'ServiceProviderConfig',
        async (s, _req, reply) => sendScim(reply, 200, serviceProviderConfig(s.base)),
      );
      scimRoute(scope, ctx, 'GET', '/ResourceTypes', 'ResourceType', async (s, _req, reply) => {
        const all = resourceTypes(s.base);
        return sendScim(reply, 200, listResponse(all.length, 1, all));
      });
      scimRoute(scope, ctx, 'GET', '/ResourceTypes/:id', 'ResourceType', async (s, req, reply) => {
        const one = resourceTypes(s.base).find((r) => r.id === req.params.id);
        if (!one) throw new ScimError(404, null, 'no such resource type');
        return sendScim(reply, 200, one);
      });
      scimRoute(scope, ctx, 'GET', '/Schemas', 'Schema', async (s, _req, reply) => {
        const all = schemas(s.base);
        return sendScim(reply, 200, listResponse(all.length, 1, all));
      });
      scimRoute(scope, ctx, 'GET', '/Schemas/:id', 'Schema', async (s, req, reply) => {
        const one = schemas(s.base).find((r) => r.id === req.params.id);
        if (!one) throw new ScimError(404, null, 'no such schema');
        return sendScim(reply, 200, one);
      });
      registerScimUserRoutes(scope, ctx);
      registerScimGroupRoutes(scope, ctx);
    },
    { prefix: SCIM_PREFIX },
  );
}
