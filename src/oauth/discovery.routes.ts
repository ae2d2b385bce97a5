// Provider metadata of a realm (discovery.ts): the OpenID Connect location under the issuer, the
// RFC 8414 section 3.1 location with the well-known segment inserted before the issuer's path,
// and the same document under the issuer for clients that append instead of inserting.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { isSigningAlgorithm } from '../keys/jws.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import { problem } from '../platform/http/problem.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { providerMetadata } from './discovery.ts';

// As long as the key set's cache (keys/jwks.routes.ts): metadata changes only with the keys.
const CACHE_CONTROL = 'public, max-age=300';

/** The policy members discovery shows: the realm-wide PAR switch and whether registration is on. */
async function policyFacts(ctx: ApiDeps, realmId: string): Promise<{ push: boolean; registration: boolean }> {
  const policy = await currentPolicy(ctx.db, realmId);
  return {
    push: policyValue(policy, 'interaction', 'require_pushed_authorization_requests') === true,
    registration: policyValue(policy, 'client_registration', 'enabled') === true,
  };
}

async function sendMetadata(ctx: ApiDeps, realmName: string, reply: FastifyReply) {
  const realm = await findRequestedRealm(ctx, realmName);
  if (!realm) throw problem.notFound('no such realm');
  const keySet = await ctx.keyStore.publishedKeySet(realm.name);
  const published = (keySet?.keys ?? []).map((k) => k.alg).filter(isSigningAlgorithm);
  const facts = await policyFacts(ctx, realm.id);
  // A realm without keys signs nothing yet; its first key will use the configured algorithm.
  const algorithms: SigningAlgorithm[] =
    published.length > 0 ? published : [ctx.config.keys.signingAlgorithm];
  return reply
    .header('cache-control', CACHE_CONTROL)
    .send(
      providerMetadata(
        ctx.config.server.publicOrigin,
        realm.name,
        algorithms,
        facts.push,
        facts.registration,
        ctx.config.server.mtlsOrigin,
      ),
    );
}

export function registerDiscovery(app: FastifyInstance, ctx: ApiDeps): void {
  type Req = { Params: { realm: string } };
  app.get<Req>('/realms/:realm/.well-known/openid-configuration', (req, reply) =>
    sendMetadata(ctx, req.params.realm, reply),
  );
  app.get<Req>('/.well-known/oauth-authorization-server/realms/:realm', (req, reply) =>
    sendMetadata(ctx, req.params.realm, reply),
  );
  app.get<Req>('/realms/:realm/.well-known/oauth-authorization-server', (req, reply) =>
    sendMetadata(ctx, req.params.realm, reply),
  );
}
