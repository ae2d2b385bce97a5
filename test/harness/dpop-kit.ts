// DPoP proofs as a client makes them (RFC 9449 section 4), signed with jose, with every member
// open to a test that wants to break one.
import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

export interface ProofOptions {
  method?: string;
  url: string;
  accessToken?: string;
  nonce?: string;
  /** Seconds since the epoch; default now. */
  iat?: number;
  jti?: string;
  typ?: string;
  /** Replaces the embedded public key (e.g. with a private one). */
  jwk?: JWK;
  /** Claims to drop from the payload. */
  omit?: string[];
}

export interface DpopKey {
  alg: string;
  jkt: string;
  publicJwk: JWK;
  proof(o: ProofOptions): Promise<string>;
}

export async function dpopKey(
  alg = 'ES256',
  opts: { modulusLength?: number; now?: () => Date } = {},
): Promise<DpopKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(opts.modulusLength ? { modulusLength: opts.modulusLength } : {}),
  });
  const publicJwk = await exportJWK(publicKey);
  const now = opts.now ?? (() => new Date());
  return {
    alg,
    publicJwk,
    jkt: await calculateJwkThumbprint(publicJwk, 'sha256'),
    async proof(o) {
      const claims: Record<string, unknown> = {
        jti: o.jti ?? randomUUID(),
        htm: o.method ?? 'POST',
        htu: o.url,
        iat: o.iat ?? Math.floor(now().getTime() / 1000),
      };
      if (o.accessToken !== undefined)
        claims.ath = createHash('sha256').update(o.accessToken).digest('base64url');
      if (o.nonce !== undefined) claims.nonce = o.nonce;
      for (const k of o.omit ?? []) delete claims[k];
      return new SignJWT(claims)
        .setProtectedHeader({ alg, typ: o.typ ?? 'dpop+jwt', jwk: o.jwk ?? publicJwk })
        .sign(privateKey);
    },
  };
}
