// Clients every realm has from birth. `identity-cli` is a public native client for the operator
// CLI's headless sign-in: PKCE, no secret, loopback redirect URIs on which any port matches
// (decision D1, RFC 8252 section 7.3). `account` is the public browser client of the built-in
// account page (docs/login-ui.md): its one redirect URI is that page on the public origin, derived
// rather than stored, so a changed origin moves it the way it moves the built-in audiences.
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { samlContinueUrl } from './saml-clients.ts';

export const CLI_CLIENT_ID = 'identity-cli';
export const ACCOUNT_CLIENT_ID = 'account';

/** Where the public listener serves the built-in UI (docs/login-ui.md). */
export const BUILTIN_UI_PATH = '/ui/';
export const BUILTIN_LOGIN_UI_PATH = '/ui/login/';
export const ACCOUNT_PAGE_PATH = '/ui/account/';

export const accountPageUrl = (publicOrigin: string): string => `${publicOrigin}${ACCOUNT_PAGE_PATH}`;

/** The redirect URIs a client may use: its registered ones, and for `account` its page. */
export function redirectUrisOf(
  client: { client_id: string; builtin: boolean; redirect_uris: string[]; type?: string },
  publicOrigin: string,
): string[] {
  if (client.builtin && client.client_id === ACCOUNT_CLIENT_ID) return [accountPageUrl(publicOrigin)];
  if (client.type === 'saml') return [samlContinueUrl(publicOrigin)];
  return client.redirect_uris;
}

export async function insertBuiltinClients(tx: Tx, realmId: string, now: Date): Promise<string> {
  const id = newId('cli', now.getTime());
  await tx.query(
    `insert into clients (realm_id, id, client_id, name, type, builtin, state, redirect_uris, grant_types,
       token_endpoint_auth_method, consent_mode, created_at, updated_at)
     values ($1, $2, $3, 'ProudAuth command line', 'native', true, 'active', $4, $5, 'none', 'implicit', $6, $6)`,
    [
      realmId,
      id,
      CLI_CLIENT_ID,
      ['http://127.0.0.1/callback', 'http://[::1]/callback'],
      // The device grant serves `identity-cli login --device` (docs/oauth-device.md).
      ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      now,
    ],
  );
  await insertAccountClient(tx, realmId, now);
  return id;
}

/** The account page's client; its redirect URI comes from redirectUrisOf, so none is stored. */
async function insertAccountClient(tx: Tx, realmId: string, now: Date): Promise<void> {
  await tx.query(
    `insert into clients (realm_id, id, client_id, name, type, builtin, state, redirect_uris, grant_types,
       token_endpoint_auth_method, consent_mode, created_at, updated_at)
     values ($1, $2, $3, 'Account', 'spa', true, 'active', '{}', $4, 'none', 'implicit', $5, $5)`,
    // One millisecond on, so listings in id order show it after identity-cli every time.
    [
      realmId,
      newId('cli', now.getTime() + 1),
      ACCOUNT_CLIENT_ID,
      ['authorization_code', 'refresh_token'],
      now,
    ],
  );
}
