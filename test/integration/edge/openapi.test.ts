// The OpenAPI 3.1 document (docs/openapi.md): served publicly, valid, naming every route of the
// public listener; and the harness's check of answers against the declared response schemas,
// which every test relies on, does fail on an answer outside its schema.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifySchema } from 'fastify';
import Type from 'typebox';
import { routeTable } from '../../../src/platform/http/app.ts';
import { startHarness } from '../../harness/harness.ts';

type Json = Record<string, unknown>;
const openApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*/g, '{*}');

describe('edge › OpenAPI document', () => {
  test('case=GET /api/v1/openapi.json is public, valid OpenAPI 3.1 and lists every route', async (t) => {
    const h = await startHarness(t);
    const res = await h.get('/api/v1/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const doc = (await res.json()) as Json;
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors));

    const paths = doc.paths as Record<string, Record<string, Json>>;
    const missing = routeTable(h.publicApp)
      .filter((r) => r.method !== 'HEAD')
      .filter((r) => !paths[openApiPath(r.url)]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(missing, []);

    const create = paths['/api/v1/realms/{realm}/users']?.post as Json;
    const body = (create.requestBody as Json).content as Record<string, { schema: Json }>;
    assert.equal(body['application/json']?.schema.additionalProperties, false);
    const responses = create.responses as Record<string, Json>;
    assert.ok(responses['201'] && responses['422'], 'the declared answers are listed');
    const refused = responses['422'] as Json;
    assert.deepEqual((refused.content as Json)['application/problem+json'], {
      schema: { $ref: '#/components/schemas/Problem' },
    });
  });

  test('case=an answer outside the declared response schema fails the request that got it', async (t) => {
    const h = await startHarness(t, {
      beforeListen: (app) => {
        const response: FastifySchema['response'] = {
          200: Type.Object({ a: Type.String() }, { additionalProperties: false }),
        };
        app.get('/test/drift', { schema: { response } }, async () => ({ a: 1 }));
        app.get('/test/undeclared', { schema: { response } }, async (_req, reply) =>
          reply.code(202).send({}),
        );
        app.get('/test/conforms', { schema: { response } }, async () => ({ a: 'x' }));
      },
    });
    await assert.rejects(
      h.get('/test/drift'),
      /answer outside the route's schema: GET \/test\/drift answered 200/,
    );
    await assert.rejects(h.get('/test/undeclared'), /status 202 is not declared/);
    assert.equal((await h.get('/test/conforms')).status, 200);
  });
});
