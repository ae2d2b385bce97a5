// DPoP at this service's own resources (UserInfo, /me, the administration API): the
// `Authorization: DPoP` scheme, the proof for this request and the token's key binding (RFC 9449
// sections 7 and 8; spec doc 1, Authentication 8). Ordinary bearer use of a bound token is refused
// by the verifier itself (access/verify-access-token.ts).
import type { FastifyRequest } from 'fastify';
import { type DpopError, dpopNonce, verifyDpop } from '../access/dpop.ts';
import { DPOP_ALGORITHMS, dpopHeaderOf } from '../access/dpop-proof.ts';
import { dpopSettings, requestUrl } from '../oauth/dpop-token-request.ts';
import type { OAuthDeps } from '../oauth/oauth.deps.ts';

export interface PresentedAuthorization {
  scheme: 'bearer' | 'dpop';
  token: string;
}

/** The token of an `Authorization: Bearer` or `DPoP` header (scheme in any case), or null. */
export function presentedAuthorization(
  header: string | undefined,
  maxTokenBytes: number,
): PresentedAuthorization | null {
  if (!header) return null;
  const m = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  const token = m?.[2];
  if (!m || !token || Buffer.byteLength(token) > maxTokenBytes) return null;
  return { scheme: (m[1] as string).toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token };
}

export type ResourceProofError = 'invalid_token' | DpopError;

/** The challenge of a DPoP failure (RFC 9449 section 7.1), with a fresh nonce when one is asked for. */
export function dpopChallenge(
  app: OAuthDeps,
  realmId: string,
  error: ResourceProofError | null,
  description?: string,
): Record<string, string> {
  const params = [`algs="${DPOP_ALGORITHMS.join(' ')}"`];
  if (error) params.unshift(`error="${error}"`);
  if (error && description) params.push(`error_description="${description.replace(/["\\]/g, '')}"`);
  const headers: Record<string, string> = { 'www-authenticate': `DPoP ${params.join(', ')}` };
  if (error === 'use_dpop_nonce') {
    const nonce = dpopNonce(app.keyring, realmId, app.clock.now());
    if (nonce) headers['dpop-nonce'] = nonce;
  }
  return headers;
}

export type ResourceProof = { ok: true } | { ok: false; error: ResourceProofError; description: string };

/**
 * The proof of a DPoP-scheme request for a token bound to `jkt` (null: the token is not bound,
 * which the DPoP scheme refuses).
 */
export async function checkResourceProof(
  app: OAuthDeps,
  req: FastifyRequest,
  realmId: string,
  token: string,
  jkt: string | null,
): Promise<ResourceProof> {
  if (jkt === null) return { ok: false, error: 'invalid_token', description: 'the token is not DPoP-bound' };
  const header = dpopHeaderOf(req.headers);
  if (header === null)
    return { ok: false, error: 'invalid_dpop_proof', description: 'a DPoP proof is required' };
  const outcome = await verifyDpop(dpopSettings(app), realmId, header, {
    method: req.method,
    url: requestUrl(app, req),
    accessToken: token,
    now: app.clock.now(),
  });
  if (!outcome.ok) return outcome;
  if (outcome.jkt !== jkt)
    return { ok: false, error: 'invalid_dpop_proof', description: 'the proof key is not the token key' };
  return { ok: true };
}
