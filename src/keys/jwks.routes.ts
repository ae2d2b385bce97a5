// GET /realms/{realm}/jwks: the realm's public key set (spec doc 1 endpoint table; doc 2 key states).
import type { FastifyInstance } from 'fastify';
import { problem } from '../platform/http/problem.ts';
import type { KeyStore } from './key-store.ts';

export function registerJwks(app: FastifyInstance, keyStore: KeyStore): void {
  app.get<{ Params: { realm: string } }>('/realms/:realm/jwks', async (req, reply) => {
    const body = await keyStore.publishedKeySet(req.params.realm);
    if (!body) throw problem.notFound('no such realm');
    return reply
      .header('cache-control', 'public, max-age=300')
      .header('content-type', 'application/json')
      .send(body);
  });
}
