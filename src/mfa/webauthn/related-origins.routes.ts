// The related-origins document (spec doc 1, "Passkey trusted authenticators" table and Passkey
// policy 3; Limits): GET /.well-known/webauthn on the rp_id's host lists the origins that may use
// passkeys of that rp_id. Served only when the operator enabled webauthn.related_origins (404
// otherwise); with server.host_policy strict only on the public origin's host (421 elsewhere);
// browsers may cache it for 300 seconds.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/api.deps.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { relatedOriginsOf } from '../../realms/index.ts';

export function registerRelatedOriginsRoute(app: FastifyInstance, ctx: ApiDeps): void {
  app.get('/.well-known/webauthn', async (req, reply) => {
    if (!ctx.config.webauthn.relatedOrigins) throw problem.notFound();
    const host = req.hostname.toLowerCase();
    if (
      ctx.config.server.hostPolicy === 'strict' &&
      host !== new URL(ctx.config.server.publicOrigin).hostname
    )
      throw new Problem(421, 'invalid_request', 'this document is served only on the public host');
    // Several realms may share an rp_id: their related origins are listed together.
    const origins = [
      ...new Set((await relatedOriginsOf(ctx.db, host)).map((o) => o.replace(/\/$/, ''))),
    ].sort();
    if (origins.length === 0) throw problem.notFound();
    return reply.header('cache-control', 'public, max-age=300').send({ origins });
  });
}
