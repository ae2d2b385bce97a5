import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';

export type ClientType = 'web' | 'spa' | 'native' | 'device' | 'service';

export interface ClientRow {
  realm_id: string;
  id: string;
  client_id: string;
  name: string;
  type: ClientType;
  builtin: boolean;
  state: 'active' | 'disabled';
  redirect_uris: string[];
  allowed_origins: string[];
  grant_types: string[];
  token_endpoint_auth_method: string;
  consent_mode: string;
  require_mfa: boolean;
  allow_remember_me: boolean;
}

export const findClient = (q: Queryable, realmId: string, clientId: string) =>
  maybeOne<ClientRow>(q, 'select * from clients where realm_id = $1 and client_id = $2', [realmId, clientId]);

/** Whether an Origin belongs to the realm's active clients (spec doc 1, Authentication 1). */
export async function isClientOrigin(q: Queryable, realmId: string, origin: string): Promise<boolean> {
  const r = await q.query(
    `select 1 from clients where realm_id = $1 and state = 'active' and $2 = any(allowed_origins) limit 1`,
    [realmId, origin],
  );
  return r.rowCount > 0;
}

export interface NewClient {
  clientId: string;
  name: string;
  type: ClientType;
  redirectUris: string[];
  allowedOrigins?: string[];
  grantTypes?: string[];
  tokenEndpointAuthMethod?: string;
  consentMode?: 'implicit' | 'required';
  requireMfa?: boolean;
  allowRememberMe?: boolean;
}

export async function insertClient(tx: Tx, realmId: string, c: NewClient, now: Date): Promise<ClientRow> {
  const r = await tx.query<ClientRow>(
    `insert into clients (realm_id, id, client_id, name, type, builtin, state, redirect_uris, allowed_origins,
       grant_types, token_endpoint_auth_method, consent_mode, require_mfa, allow_remember_me, created_at, updated_at)
     values ($1, $2, $3, $4, $5, false, 'active', $6, $7, $8, $9, $10, $11, $12, $13, $13) returning *`,
    [
      realmId,
      newId('cli', now.getTime()),
      c.clientId,
      c.name,
      c.type,
      c.redirectUris,
      c.allowedOrigins ?? [],
      c.grantTypes ?? ['authorization_code', 'refresh_token'],
      c.tokenEndpointAuthMethod ?? (c.type === 'web' ? 'client_secret_basic' : 'none'),
      c.consentMode ?? 'implicit',
      c.requireMfa ?? false,
      c.allowRememberMe ?? true,
      now,
    ],
  );
  return r.rows[0] as ClientRow;
}
