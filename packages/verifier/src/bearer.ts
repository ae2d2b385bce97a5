// Tokens come from the Authorization header only (document 1, Authentication 7): never from a query
// parameter or a body. A DPoP-bound token comes with the `DPoP` scheme (RFC 9449 section 7.1) and
// its proof in the `DPoP` header, which the verifiers check when given (dpop.ts).
import { DPOP_ALGORITHMS } from './dpop.ts';
import { invalidToken } from './errors.ts';

/** The token of an `Authorization: Bearer <token>` header; throws invalid_token otherwise. */
export function bearerToken(authorization: string | string[] | undefined): string {
  if (typeof authorization !== 'string') throw invalidToken('no bearer token in the Authorization header');
  const m = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization.trim());
  if (!m?.[1]) throw invalidToken('the Authorization header does not hold a bearer token');
  return m[1];
}

/** The WWW-Authenticate challenge for a refused request (RFC 6750 section 3). */
export const bearerChallenge = (error: 'invalid_token' | 'invalid_request' = 'invalid_token'): string =>
  `Bearer error="${error}"`;

/** The scheme and token of an `Authorization: Bearer` or `Authorization: DPoP` header. */
export function accessTokenOf(authorization: string | string[] | undefined): {
  scheme: 'bearer' | 'dpop';
  token: string;
} {
  if (typeof authorization !== 'string') throw invalidToken('no access token in the Authorization header');
  const m = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization.trim());
  if (!m?.[1] || !m[2]) throw invalidToken('the Authorization header does not hold an access token');
  return { scheme: m[1].toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token: m[2] };
}

/** The WWW-Authenticate challenge for a refused DPoP request (RFC 9449 section 7.1). */
export const dpopChallenge = (error: 'invalid_token' | 'invalid_dpop_proof' = 'invalid_token'): string =>
  `DPoP error="${error}", algs="${DPOP_ALGORITHMS.join(' ')}"`;
