// Tokens come from the Authorization header only (document 1, Authentication 7): never from a query
// parameter or a body. A sender-constrained (DPoP) token needs a proof this package does not check.
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
