// The OpenAPI 3.1 document, generated from the running route table by @fastify/swagger
// (docs/openapi.md). A route declared with a schema (route-schema.ts) is described in full; a
// route not declared yet is listed with its path, method and problem answers, so the document
// names every route the listener serves.
import { fastifySwagger } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema } from 'fastify';
import Type from 'typebox';
import { ProblemSchema, UNDESCRIBED_RESPONSES } from './route-schema.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const ACCEPT_ALL = () => true;

/**
 * Hooks the document generator and Fastify's schema support into an edge, before any route is
 * added. Requests are decoded by the route itself after authentication (api-route.ts), so
 * Fastify's validation step accepts everything: a body is never judged before its caller is. Answers
 * are written exactly as the handler built them (JSON.stringify), never re-shaped by a serializer
 * compiled from the response schema; the test harness checks them against that schema instead.
 */
export function installOpenApi(app: FastifyInstance): void {
  app.setValidatorCompiler(() => ACCEPT_ALL);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Shared schemas the routes refer to by $id; the document lists them under components.
  app.addSchema(ProblemSchema);
  // Called directly rather than through app.register so that its onRoute hook is in place now:
  // the edge's routes are added synchronously, before Fastify would load a registered plugin.
  fastifySwagger(
    app,
    {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'ProudAuth',
          // The API's version, the one in its paths (/api/v1).
          version: '1',
          description: 'Generated from the route table; see docs/openapi.md.',
        },
      },
      transform: ({ schema, url }) => ({ schema: described(schema), url }),
      // A shared schema is named by its $id in the document (#/components/schemas/Problem).
      refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    },
    (err) => {
      if (err) throw err;
    },
  );
}

/** A route without a response schema is listed with the problem answers every route has. */
function described(schema: FastifySchema | undefined): FastifySchema {
  if (schema?.response) return schema;
  return { ...(schema ?? {}), response: UNDESCRIBED_RESPONSES };
}

/** The document of an edge's routes (after it is ready), with a stable member order. */
export function openApiDocument(app: FastifyInstance): Record<string, unknown> {
  const doc = app.swagger() as unknown as Record<string, unknown>;
  const paths = doc.paths as Record<string, unknown>;
  const sorted = Object.fromEntries(
    Object.keys(paths)
      .sort()
      .map((p) => [p, paths[p]]),
  );
  return { ...doc, paths: sorted };
}

const DOCUMENT_ROUTE = {
  summary: 'This OpenAPI document',
  tags: ['meta'],
  response: { 200: Type.Object({ openapi: Type.Literal('3.1.0') }, { additionalProperties: true }) },
};

/** GET /api/v1/openapi.json: public, like discovery. */
export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get(OPENAPI_PATH, { schema: DOCUMENT_ROUTE }, async (_req, reply) =>
    reply.type('application/json').send(JSON.stringify(openApiDocument(app))),
  );
}
