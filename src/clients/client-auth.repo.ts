// SQL for client authentication: one round trip loads the client with its active secrets, and
// client assertion ids are recorded once until they expire.
import type { JSONWebKeySet } from 'jose';
import { maybeOne, type Queryable } from '../platform/db/db.ts';
import type { StoredVerifier } from './client-secrets.ts';
import type { ClientRow } from './clients.repo.ts';
import type { StoredTlsClientAuth } from './tls-client-auth.ts';

/**
 * What client authentication reads of a client: enough to prove and check it, nothing a token
 * response needs (introspection loads only this for its caller).
 */
export interface ClientAuthFacts
  extends Pick<ClientRow, 'realm_id' | 'id' | 'client_id' | 'type' | 'state' | 'token_endpoint_auth_method'> {
  jwks: JSONWebKeySet | null;
  /** tls_client_auth settings (migration 0058); null for other methods. */
  tls_client_auth: StoredTlsClientAuth | null;
  secrets: (StoredVerifier & { lastUsedAt: Date | null; expiresAt: Date | null })[];
}

export interface ClientAuthRow extends ClientRow, ClientAuthFacts {}

interface Raw extends ClientRow {
  jwks: JSONWebKeySet | null;
  tls_client_auth: StoredTlsClientAuth | null;
  secrets:
    | {
        id: string;
        verifier: string;
        key_version: number;
        last_used_at: string | null;
        expires_at: string | null;
      }[]
    | string;
}

/** The unrevoked, unexpired secrets (as of $<nowParam>) of the client row `alias`, as JSON. */
export const clientSecretsJson = (alias: string, now: string): string => `(
  select coalesce(json_agg(json_build_object('id', s.id, 'verifier', s.verifier,
           'key_version', s.key_version, 'last_used_at', s.last_used_at, 'expires_at', s.expires_at)
           order by s.created_at), '[]')
    from client_secrets s
   where s.realm_id = ${alias}.realm_id and s.client_row_id = ${alias}.id and s.revoked_at is null
     and (s.expires_at is null or s.expires_at > ${now}))`;

// The members of ClientRow, the only ones a token endpoint reads of its caller: naming them keeps
// the value small (no descriptions, logout URIs or timestamps) and json_build_object writes text
// directly, where to_jsonb of the row built a binary value first. A record, so the type checker
// insists on every member.
const CLIENT_ROW_MEMBERS: Record<keyof ClientRow, true> = {
  allow_remember_me: true,
  allowed_origins: true,
  builtin: true,
  client_id: true,
  consent_mode: true,
  grant_types: true,
  id: true,
  id_token_claims: true,
  name: true,
  oidc_scopes: true,
  realm_id: true,
  redirect_uris: true,
  require_mfa: true,
  require_pushed_authorization_requests: true,
  state: true,
  token_endpoint_auth_method: true,
  type: true,
};
const CLIENT_ROW_COLUMNS = Object.keys(CLIENT_ROW_MEMBERS);

/**
 * The client row `alias` with its secrets as one JSON value (clientAuthRowFrom reads it); `now`
 * is the SQL expression of the current time (a placeholder).
 */
export const clientAuthJsonOf = (alias: string, now: string): string =>
  `json_build_object(${CLIENT_ROW_COLUMNS.map((c) => `'${c}', ${alias}.${c}`).join(', ')},
     'jwks', ${alias}.jwks, 'tls_client_auth', ${alias}.tls_client_auth,
     'secrets', ${clientSecretsJson(alias, now)})`;

/**
 * The client with client_id $<clientParam> in realm $1 with its secrets, as one JSON value: a
 * scalar subquery, so other statements can load the caller in the same round trip.
 */
export const clientForAuthJson = (clientParam: number, nowParam: number): string =>
  `(select ${clientAuthJsonOf('c', `$${nowParam}`)} from clients c where c.realm_id = $1 and c.client_id = $${clientParam})`;

/** ClientAuthFacts of the client row `alias` as one JSON value (clientAuthFactsFrom reads it). */
export const clientAuthFactsJsonOf = (alias: string, now: string): string =>
  `json_build_object('realm_id', ${alias}.realm_id, 'id', ${alias}.id, 'client_id', ${alias}.client_id,
     'type', ${alias}.type, 'state', ${alias}.state, 'token_endpoint_auth_method', ${alias}.token_endpoint_auth_method,
     'jwks', ${alias}.jwks, 'tls_client_auth', ${alias}.tls_client_auth,
     'secrets', ${clientSecretsJson(alias, now)})`;

/** The value clientAuthFactsJsonOf produced. */
export const clientAuthFactsFrom = (value: unknown): ClientAuthFacts | null => clientAuthRowFrom(value);

/**
 * The client as a request at `now` may use it: secrets past their expiry left out. For a copy a
 * process kept from an earlier read (whose statement filtered by its own time); the secrets stay
 * the kept objects, so a use recorded on one (client-auth.ts) is seen by the next request.
 */
export function secretsAsOf<C extends ClientAuthFacts>(client: C | null, now: Date): C | null {
  if (client === null) return null;
  const t = now.getTime();
  const unexpired = (s: ClientAuthFacts['secrets'][number]) =>
    s.expiresAt === null || s.expiresAt.getTime() > t;
  return client.secrets.every(unexpired) ? client : { ...client, secrets: client.secrets.filter(unexpired) };
}

/** The row clientForAuthJson produced (pg and PGlite hand json over parsed or as text). */
export function clientAuthRowFrom(value: unknown): ClientAuthRow | null {
  if (value === null || value === undefined) return null;
  const raw = (typeof value === 'string' ? JSON.parse(value) : value) as Raw;
  const secrets = typeof raw.secrets === 'string' ? JSON.parse(raw.secrets) : raw.secrets;
  return {
    ...raw,
    secrets: (secrets as Exclude<Raw['secrets'], string>).map((s) => ({
      id: s.id,
      verifier: s.verifier,
      keyVersion: Number(s.key_version),
      lastUsedAt: s.last_used_at === null ? null : new Date(s.last_used_at),
      expiresAt: s.expires_at === null ? null : new Date(s.expires_at),
    })),
  };
}

/** The client by its public client_id, with its unrevoked, unexpired secrets; read fresh every time. */
export async function findClientForAuth(
  q: Queryable,
  realmId: string,
  clientId: string,
  now: Date,
): Promise<ClientAuthRow | null> {
  const row = await maybeOne<{ client: unknown }>(q, `select ${clientForAuthJson(2, 3)} as client`, [
    realmId,
    clientId,
    now,
  ]);
  return clientAuthRowFrom(row?.client);
}

/**
 * Records an assertion id; false when it is already recorded and unexpired (a replay). An expired
 * record is taken over, so a row left behind by cleanup never blocks a new assertion.
 */
export async function recordAssertionJti(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  jtiDigest: string,
  expiresAt: Date,
  now: Date,
): Promise<boolean> {
  const r = await q.query(
    `insert into client_assertion_jtis (realm_id, client_row_id, jti_digest, expires_at)
     values ($1, $2, $3, $4)
     on conflict (realm_id, client_row_id, jti_digest) do update set expires_at = excluded.expires_at
       where client_assertion_jtis.expires_at <= $5
     returning 1 as recorded`,
    [realmId, clientRowId, jtiDigest, expiresAt, now],
  );
  return r.rows.length === 1;
}

/** Deletes expired assertion ids, at most `limit` per call (for a periodic worker task). */
export async function deleteExpiredAssertionJtis(q: Queryable, now: Date, limit: number): Promise<number> {
  const r = await q.query(
    `delete from client_assertion_jtis where (realm_id, client_row_id, jti_digest) in (
       select realm_id, client_row_id, jti_digest from client_assertion_jtis where expires_at <= $1 limit $2)
     returning 1`,
    [now, limit],
  );
  return r.rows.length;
}
