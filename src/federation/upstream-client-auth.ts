// How federation authenticates to an upstream's token endpoint: the connection's client secret
// (opened from its sealed form under the root key, or read through its key reference), by the
// method its configuration names. Apple's "client secret" is a short-lived JWT signed with the
// team's private key, which is what the stored secret holds (docs/federation.md, Apple).
import { importPKCS8, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { type ConnectionRow, effectiveConfig, providerSecretAad } from '../identity-providers/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';

export interface SecretSources {
  keyring: RootKeyring | null;
  /** Resolves a key reference (file:, env:, cred:, kms:, vault:) to the secret. */
  resolveRef(ref: string): Promise<string>;
}

/** The connection's client secret, or null when it has none. Throws when it cannot be opened. */
export async function clientSecretOf(c: ConnectionRow, sources: SecretSources): Promise<string | null> {
  if (c.client_secret_ref) return sources.resolveRef(c.client_secret_ref);
  if (!c.client_secret_sealed) return null;
  if (!sources.keyring) throw new Error('no root key is configured to open provider secrets');
  return sources.keyring
    .decrypt('provider-secret', c.client_secret_sealed, providerSecretAad(c.realm_id, c.id))
    .toString('utf8');
}

const APPLE_SECRET_TTL_S = 300;

async function appleClientSecret(
  c: ConnectionRow,
  privateKeyPem: string,
  nowSeconds: number,
): Promise<string> {
  const config = effectiveConfig(c);
  const key = await importPKCS8(privateKeyPem, 'ES256');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: String(config.key_id) })
    .setIssuer(String(config.team_id))
    .setSubject(String(config.client_id))
    .setAudience(c.issuer)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(nowSeconds + APPLE_SECRET_TTL_S)
    .sign(key);
}

export async function clientAuthOf(
  c: ConnectionRow,
  sources: SecretSources,
  nowSeconds: number,
): Promise<oauth.ClientAuth> {
  const method = effectiveConfig(c).token_endpoint_auth_method ?? 'client_secret_basic';
  if (method === 'none') return oauth.None();
  const secret = await clientSecretOf(c, sources);
  if (secret === null) throw new Error(`the connection has no client secret for ${method}`);
  switch (method) {
    case 'client_secret_post':
      return oauth.ClientSecretPost(secret);
    case 'apple_client_secret':
      return oauth.ClientSecretPost(await appleClientSecret(c, secret, nowSeconds));
    default:
      return oauth.ClientSecretBasic(secret);
  }
}
