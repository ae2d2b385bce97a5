// The redirect that ends a transaction: code, state and iss as query parameters (RFC 9207 mix-up
// defence), or one signed `response` JWT for the JWT response modes (JARM).
import { SignJWT } from 'jose';
import type { Signer } from '../keys/key-store.ts';
import type { ResponseMode } from './transaction.ts';

/** Lifetime of a JARM response object; it only needs to survive the redirect. */
const JARM_TTL_SECONDS = 60;

export interface ResponseTarget {
  redirectUri: string;
  responseMode: ResponseMode;
  clientId: string;
  state: string | null;
  issuer: string;
}

/**
 * Appends parameters to the redirect URI as registered: its own query is kept byte for byte
 * (RFC 6749 section 3.1.2), which re-serializing it through URL would not guarantee.
 */
export function withParams(redirectUri: string, params: [string, string][]): string {
  const query = new URLSearchParams(params).toString();
  if (!redirectUri.includes('?')) return `${redirectUri}?${query}`;
  return redirectUri.endsWith('?') || redirectUri.endsWith('&')
    ? redirectUri + query
    : `${redirectUri}&${query}`;
}

export async function authorizationRedirect(
  target: ResponseTarget,
  params: Record<string, string>,
  signer: Signer | null,
  now: Date,
): Promise<string> {
  const all: Record<string, string> = {
    ...params,
    ...(target.state !== null ? { state: target.state } : {}),
  };
  if (target.responseMode === 'query') {
    return withParams(target.redirectUri, [...Object.entries(all), ['iss', target.issuer]]);
  }
  if (!signer) throw new Error('a JWT response mode needs the realm signing key');
  const iat = Math.floor(now.getTime() / 1000);
  const jwt = await new SignJWT(all)
    .setProtectedHeader({ alg: signer.algorithm, kid: signer.kid })
    .setIssuer(target.issuer)
    .setAudience(target.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + JARM_TTL_SECONDS)
    .sign(signer.key);
  return withParams(target.redirectUri, [['response', jwt]]);
}
