// SQL for OAuth clients (migrations 0001, 0002, 0004, 0006). Lookups by the public client_id;
// every statement filters on realm_id.
import { jsonColumn, many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { StoredTlsClientAuth } from './tls-client-auth.ts';

export type ClientType = 'web' | 'spa' | 'native' | 'device' | 'service' | 'saml';
export type ClientState = 'active' | 'disabled';
/** `standard`: the granted scopes' claims in ID tokens; `minimal`: the protocol claims only. */
export type IdTokenClaims = 'standard' | 'minimal';

export interface ClientRow {
  realm_id: string;
  id: string;
  client_id: string;
  name: string;
  type: ClientType;
  builtin: boolean;
  state: ClientState;
  redirect_uris: string[];
  allowed_origins: string[];
  grant_types: string[];
  token_endpoint_auth_method: string;
  consent_mode: string;
  require_mfa: boolean;
  allow_remember_me: boolean;
  /** What its ID tokens carry besides the protocol claims (migration 0025). */
  id_token_claims: IdTokenClaims;
  /** Authorization requests only through the PAR endpoint (RFC 9126 section 5; migration 0034). */
  require_pushed_authorization_requests: boolean;
  /**
   * The OpenID scopes UserInfo's implicit grant gives it; null gives them all (migration 0039: a
   * dynamically registered client holds the scopes it registered).
   */
  oidc_scopes: string[] | null;
}

/** Inline public key set of a private_key_jwt client, as stored. */
export interface StoredJwks {
  keys: Record<string, unknown>[];
}

/** Everything the administration API shows, with the service principal of a service client. */
export interface ClientRecord extends ClientRow {
  description: string | null;
  post_logout_redirect_uris: string[];
  /** Where logout tokens go (OpenID Connect Back-Channel Logout 1.0; migration 0040). */
  backchannel_logout_uri: string | null;
  backchannel_logout_session_required: boolean;
  jwks: StoredJwks | null;
  /** tls_client_auth subject and CA certificates (migration 0058); null for other methods. */
  tls_client_auth: StoredTlsClientAuth | null;
  version: number;
  created_at: Date;
  updated_at: Date;
  service_principal_id: string | null;
}

export const findClient = (q: Queryable, realmId: string, clientId: string) =>
  maybeOne<ClientRow>(q, 'select * from clients where realm_id = $1 and client_id = $2', [realmId, clientId]);

const CLIENT_ROW_FIELDS: readonly (keyof ClientRow)[] = [
  'realm_id',
  'id',
  'client_id',
  'name',
  'type',
  'builtin',
  'state',
  'redirect_uris',
  'allowed_origins',
  'grant_types',
  'token_endpoint_auth_method',
  'consent_mode',
  'require_mfa',
  'allow_remember_me',
  'id_token_claims',
  'require_pushed_authorization_requests',
  'oidc_scopes',
];

/**
 * A SQL expression giving the ClientRow of the client `clientIdSql` names in realm `realmIdSql` as
 * one JSON column (null when there is none), so a statement run anyway can bring the client along.
 */
export const clientRowJsonSql = (realmIdSql: string, clientIdSql: string): string =>
  `(select json_build_object(${CLIENT_ROW_FIELDS.map((f) => `'${f}', c.${f}`).join(', ')})
      from clients c where c.realm_id = ${realmIdSql} and c.client_id = ${clientIdSql})`;

/** The ClientRow of a clientRowJsonSql column (every field is a JSON value as stored). */
export const clientRowOfJson = (v: unknown): ClientRow | null => jsonColumn<ClientRow | null>(v);

/** The public key set registered on a client (private_key_jwt), which also signs its request objects. */
export async function findClientJwks(
  q: Queryable,
  realmId: string,
  clientId: string,
): Promise<StoredJwks | null> {
  const row = await maybeOne<{ jwks: unknown }>(
    q,
    'select jwks from clients where realm_id = $1 and client_id = $2',
    [realmId, clientId],
  );
  return row?.jwks ? jsonColumn<StoredJwks>(row.jwks) : null;
}

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
  idTokenClaims?: IdTokenClaims;
  requirePushedRequests?: boolean;
  backchannelLogoutUri?: string | null;
  backchannelLogoutSessionRequired?: boolean;
  description?: string | null;
  postLogoutRedirectUris?: string[];
  jwks?: StoredJwks | null;
  tlsClientAuth?: StoredTlsClientAuth | null;
  /** A registration held for approval starts disabled (migration 0039). */
  state?: ClientState;
  oidcScopes?: string[] | null;
}

const INSERT = `insert into clients (realm_id, id, client_id, name, type, builtin, state, redirect_uris,
    allowed_origins, grant_types, token_endpoint_auth_method, consent_mode, require_mfa, allow_remember_me,
    description, post_logout_redirect_uris, jwks, id_token_claims, require_pushed_authorization_requests,
    oidc_scopes, backchannel_logout_uri, backchannel_logout_session_required, tls_client_auth, created_at, updated_at)
  values ($1, $2, $3, $4, $5, false, $19, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $17, $18, $20, $21, $22,
    $23, $16, $16)`;

function insertParams(realmId: string, c: NewClient, now: Date): unknown[] {
  return [
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
    c.description ?? null,
    c.postLogoutRedirectUris ?? [],
    c.jwks ? JSON.stringify(c.jwks) : null,
    now,
    c.idTokenClaims ?? 'standard',
    c.requirePushedRequests ?? false,
    c.state ?? 'active',
    c.oidcScopes ?? null,
    c.backchannelLogoutUri ?? null,
    c.backchannelLogoutSessionRequired ?? false,
    c.tlsClientAuth ? JSON.stringify(c.tlsClientAuth) : null,
  ];
}

/** Inserts a client; a taken client_id fails with the database's unique violation. */
export async function insertClient(tx: Tx, realmId: string, c: NewClient, now: Date): Promise<ClientRow> {
  const r = await tx.query<ClientRow>(`${INSERT} returning *`, insertParams(realmId, c, now));
  return r.rows[0] as ClientRow;
}

/** Inserts a client unless its client_id is taken in the realm (then null). */
export const tryInsertClient = (tx: Tx, realmId: string, c: NewClient, now: Date) =>
  maybeOne<ClientRow>(
    tx,
    `${INSERT} on conflict (realm_id, client_id) do nothing returning *`,
    insertParams(realmId, c, now),
  );

const RECORD = `select c.*, p.id as service_principal_id from clients c
  left join service_principals p on p.realm_id = c.realm_id and p.client_row_id = c.id`;

export const findClientRecord = (q: Queryable, realmId: string, clientId: string) =>
  maybeOne<ClientRecord>(q, `${RECORD} where c.realm_id = $1 and c.client_id = $2`, [realmId, clientId]);

/** The client row locked for a change; changes to one client run one at a time. */
export const lockClientRecord = (tx: Tx, realmId: string, clientId: string) =>
  maybeOne<ClientRecord>(tx, `${RECORD} where c.realm_id = $1 and c.client_id = $2 for update of c`, [
    realmId,
    clientId,
  ]);

export interface ClientListFilter {
  type?: ClientType;
  state?: ClientState;
}

/** One keyset page in creation order (row ids are time-ordered ULIDs); `limit` rows at most. */
export const listClientRecords = (
  q: Queryable,
  realmId: string,
  filter: ClientListFilter,
  afterId: string | null,
  limit: number,
) =>
  many<ClientRecord>(
    q,
    `${RECORD} where c.realm_id = $1 and ($2::text is null or c.id > $2)
       and ($3::text is null or c.type = $3) and ($4::text is null or c.state = $4)
     order by c.id limit $5`,
    [realmId, afterId, filter.type ?? null, filter.state ?? null, limit],
  );

/** The members an administrator may change (docs/api-clients.md, PATCH). */
export interface ClientSettings {
  name: string;
  description: string | null;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  allowedOrigins: string[];
  grantTypes: string[];
  consentMode: string;
  requireMfa: boolean;
  allowRememberMe: boolean;
  idTokenClaims: IdTokenClaims;
  requirePushedRequests: boolean;
  backchannelLogoutUri: string | null;
  backchannelLogoutSessionRequired: boolean;
  jwks: StoredJwks | null;
  tlsClientAuth: StoredTlsClientAuth | null;
}

export async function updateClientSettings(
  tx: Tx,
  realmId: string,
  rowId: string,
  s: ClientSettings,
  now: Date,
): Promise<void> {
  await tx.query(
    `update clients set name = $3, description = $4, redirect_uris = $5, post_logout_redirect_uris = $6,
       allowed_origins = $7, grant_types = $8, consent_mode = $9, require_mfa = $10, allow_remember_me = $11,
       jwks = $12, id_token_claims = $14, require_pushed_authorization_requests = $15,
       backchannel_logout_uri = $16, backchannel_logout_session_required = $17, tls_client_auth = $18,
       version = version + 1, updated_at = $13
     where realm_id = $1 and id = $2`,
    [
      realmId,
      rowId,
      s.name,
      s.description,
      s.redirectUris,
      s.postLogoutRedirectUris,
      s.allowedOrigins,
      s.grantTypes,
      s.consentMode,
      s.requireMfa,
      s.allowRememberMe,
      s.jwks ? JSON.stringify(s.jwks) : null,
      now,
      s.idTokenClaims,
      s.requirePushedRequests,
      s.backchannelLogoutUri,
      s.backchannelLogoutSessionRequired,
      s.tlsClientAuth ? JSON.stringify(s.tlsClientAuth) : null,
    ],
  );
}

export async function updateClientState(
  tx: Tx,
  realmId: string,
  rowId: string,
  state: ClientState,
  now: Date,
): Promise<void> {
  await tx.query(
    'update clients set state = $3, version = version + 1, updated_at = $4 where realm_id = $1 and id = $2',
    [realmId, rowId, state, now],
  );
}

/** The OpenID scopes a registered client holds (migration 0039; null: all of them). */
export async function updateClientOidcScopes(
  tx: Tx,
  realmId: string,
  rowId: string,
  scopes: string[] | null,
): Promise<void> {
  await tx.query('update clients set oidc_scopes = $3 where realm_id = $1 and id = $2', [
    realmId,
    rowId,
    scopes,
  ]);
}
