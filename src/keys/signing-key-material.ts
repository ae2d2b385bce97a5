// Key pairs for a realm's token signatures. Private keys leave this module only sealed under the
// root key; the kid is the RFC 7638 thumbprint, so it is stable and collision-free.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, type JWK } from 'jose';
import type { SigningAlgorithm } from '../platform/config/settings.ts';

export interface KeyMaterial {
  kid: string;
  algorithm: SigningAlgorithm;
  publicJwk: JWK;
  privatePkcs8: string;
}

export async function generateKeyMaterial(algorithm: SigningAlgorithm): Promise<KeyMaterial> {
  const { publicKey, privateKey } = await generateKeyPair(algorithm, {
    extractable: true,
    ...(algorithm === 'EdDSA' ? { crv: 'Ed25519' } : {}),
    ...(algorithm === 'RS256' || algorithm === 'PS256' ? { modulusLength: 2048 } : {}),
  });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return {
    kid,
    algorithm,
    publicJwk: { ...jwk, kid, alg: algorithm, use: 'sig' },
    privatePkcs8: await exportPKCS8(privateKey),
  };
}

export const privateKeyFromPkcs8 = (pem: string): KeyObject => createPrivateKey({ key: pem, format: 'pem' });

/** Associated data binding a sealed private key to its row. */
export const sealContext = (realmId: string, kid: string): string => `signing-key/${realmId}/${kid}`;
