// An administration or account API route declared with its schemas (docs/openapi.md): the
// request (path parameters, query, body) and every answer. Authentication and authorization run
// first, exactly as in apiRoute; then the path parameters and the body are read through the
// schema (route-schema.ts), so a refused body answers the problem the hand-written decoders gave.
import type { FastifyInstance, FastifySchema, HTTPMethods } from 'fastify';
import Type, { type TSchema } from 'typebox';
import {
  type BodyOf,
  bodyReader,
  type ParamsOf,
  paramsReader,
  problems,
  type RouteSchema,
} from '../platform/http/route-schema.ts';
import type { ApiDeps } from './api.deps.ts';
import type { ApiAuthOptions } from './api-auth.ts';
import { type ApiCall, apiRoute } from './api-route.ts';

export interface DeclaredApiCall<S extends RouteSchema> extends ApiCall<ParamsOf<S>> {
  /** The body decoded through the route's schema (camelCase members). */
  body: BodyOf<S>;
}

/**
 * Answers every API route may give: no or a bad token, not allowed, no such realm, an unexpected
 * failure (a bare internal_error, never details), overload or a database outage.
 */
const API_PROBLEMS = [401, 403, 404, 500, 503];
/** Answers of a route that reads a body: unreadable, too large, not JSON, refused values. */
const BODY_PROBLEMS = [400, 413, 415, 422];

/** The route's schema as Fastify and the document see it: the realm parameter and common answers. */
export function fastifySchemaOf(schema: RouteSchema): FastifySchema {
  const own = (schema.params as (TSchema & { properties?: Record<string, TSchema> }) | undefined)?.properties;
  const { bodyOptional: _bodyOptional, response, ...rest } = schema;
  return {
    ...rest,
    params: Type.Object({ realm: Type.String({ minLength: 1 }), ...(own ?? {}) }),
    response: {
      ...problems(
        ...API_PROBLEMS,
        ...(schema.querystring ? [400] : []),
        ...(schema.body ? BODY_PROBLEMS : []),
      ),
      ...response,
    },
  };
}

export function declaredApiRoute<const S extends RouteSchema>(
  app: FastifyInstance,
  ctx: ApiDeps,
  method: HTTPMethods,
  /** Under /api/v1/realms/:realm */
  path: string,
  auth: ApiAuthOptions,
  schema: S,
  handler: (call: DeclaredApiCall<S>) => Promise<unknown>,
): void {
  // Compiled here, once per route: nothing about the schema is worked out per request.
  const readBody = bodyReader(schema);
  const checkParams = paramsReader(schema);
  apiRoute<ParamsOf<S> & Record<string, string>>(
    app,
    ctx,
    method,
    path,
    auth,
    async (call) => {
      checkParams(call.req.params as Record<string, string>);
      const body = readBody(call.req.body) as BodyOf<S>;
      return handler({ ...call, body });
    },
    fastifySchemaOf(schema),
  );
}
