// Strict-online verification (document 2, Revocation exposure): every token is introspected at
// {issuer}/oauth/introspect (RFC 7662) with the resource server's own client credentials, and no
// answer is cached, so a revocation counts from its commit. A failed call denies (503), never allows.
import { confirmPossession, type DpopReplayCache, type DpopRequest, MemoryReplayCache } from './dpop.ts';
import { invalidToken, VerificationError } from './errors.ts';
import type { AccessClaims } from './offline.ts';

export interface IntrospectionOptions {
  issuer: string;
  audience: string;
  /** A confidential client registered as introspector of the resource (client_secret_basic). */
  clientId: string;
  clientSecret: string;
  /** Default `{issuer}/oauth/introspect`. */
  introspectionUri?: string;
  /** How long one call may take (default 5 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Where used DPoP proofs are remembered; default this process's memory. */
  dpopReplayCache?: DpopReplayCache;
}

export interface IntrospectionVerifier {
  /** With `dpop` for a token of the `DPoP` scheme: the proof must hold for the token's key. */
  verify(token: string, dpop?: DpopRequest): Promise<{ claims: AccessClaims }>;
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export function introspectionVerifier(opts: IntrospectionOptions): IntrospectionVerifier {
  const uri = opts.introspectionUri ?? `${opts.issuer}/oauth/introspect`;
  const doFetch = opts.fetch ?? fetch;
  const authorization = basic(opts.clientId, opts.clientSecret);
  const replay = opts.dpopReplayCache ?? new MemoryReplayCache();
  return {
    async verify(token, dpop) {
      let body: Record<string, unknown>;
      try {
        const res = await doFetch(uri, {
          method: 'POST',
          headers: {
            authorization,
            'content-type': 'application/x-www-form-urlencoded',
            accept: 'application/json',
          },
          body: new URLSearchParams({ token }).toString(),
          signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
        });
        if (res.status !== 200) throw new Error(`introspection answered ${res.status}`);
        body = (await res.json()) as Record<string, unknown>;
      } catch (e) {
        throw new VerificationError('unavailable', 'introspection could not be asked', { cause: e });
      }
      if (body.active !== true) throw invalidToken('the token is not active');
      const aud = body.aud;
      const audiences = Array.isArray(aud) ? aud : [aud];
      if (body.iss !== opts.issuer || !audiences.includes(opts.audience))
        throw invalidToken('the token is for another issuer or audience');
      await confirmPossession(body.cnf, token, dpop, replay, Date.now());
      return { claims: body as unknown as AccessClaims };
    },
  };
}
