// Clients every realm has from birth. `identity-cli` is a public native client for the operator
// CLI's headless sign-in: PKCE, no secret, loopback redirect URIs on which any port matches
// (decision D1, RFC 8252 section 7.3).
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';

export const CLI_CLIENT_ID = 'identity-cli';

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
      ['authorization_code', 'refresh_token'],
      now,
    ],
  );
  return id;
}
