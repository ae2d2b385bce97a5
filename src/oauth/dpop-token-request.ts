// DPoP at the token endpoint (RFC 9449 section 5; spec doc 1, Authentication 8): the proof of a
// token request is checked after the client authenticated and before any grant is spent, so a bad
// proof consumes no code or refresh token (decision D5). Its key thumbprint binds what the grant
// issues.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DpopSettings, dpopNonce, verifyDpop } from '../access/dpop.ts';
import { dpopHeaderOf } from '../access/dpop-proof.ts';
import { OAuthError } from '../kernel/oauth-error.ts';
import type { OAuthDeps } from './oauth.deps.ts';

/** The URL a request was sent to, under the public origin (query and fragment are ignored). */
export const requestUrl = (app: OAuthDeps, req: FastifyRequest): string =>
  `${app.config.server.publicOrigin}${req.url}`;

export const dpopSettings = (app: OAuthDeps): DpopSettings => ({
  db: app.db,
  keyring: app.keyring,
  nonceRequired: app.config.tokens.dpopNonceRequired,
});

/**
 * The key thumbprint of the request's DPoP proof, or null without a DPoP header; a bad proof
 * throws invalid_dpop_proof, a missing or stale nonce use_dpop_nonce with a fresh one.
 */
export async function tokenRequestJkt(
  app: OAuthDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  realmId: string,
  now: Date,
): Promise<string | null> {
  const header = dpopHeaderOf(req.headers);
  const settings = dpopSettings(app);
  // RFC 9449 section 8.2: a server that asks for nonces hands out the next one with every answer.
  const nonce = settings.nonceRequired ? dpopNonce(app.keyring, realmId, now) : null;
  if (nonce) reply.header('dpop-nonce', nonce);
  if (header === null) return null;
  const outcome = await verifyDpop(settings, realmId, header, {
    method: req.method,
    url: requestUrl(app, req),
    now,
  });
  if (outcome.ok) return outcome.jkt;
  throw new OAuthError(400, outcome.error, outcome.description, nonce ? { 'dpop-nonce': nonce } : {});
}
