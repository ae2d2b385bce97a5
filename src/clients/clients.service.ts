// Use cases of the clients administration API (docs/api-clients.md): creation and reads, plus
// what the change and secret use cases share. Each change is validated first, then written with
// its audit records and outbox events in one transaction (docs/architecture.md, One use case, one
// transaction). Creation has no catalog
// event (spec doc 2, Catalog). Changes: client-changes.service.ts; secrets: client-secrets.service.ts.

import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Config } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import {
  type ClientDraft,
  checkClientDraft,
  defaultAuthMethod,
  defaultGrantTypes,
  type GivenMembers,
} from './client-rules.ts';
import {
  type ClientSecretMetadata,
  type IssuedClientSecret,
  issueClientSecret,
  listActiveSecrets,
  listActiveSecretsOfClients,
  SECRET_AUTH_METHODS,
} from './client-secrets.ts';
import type { ListQuery } from './clients.decode.ts';
import { decodeCursor, encodeCursor } from './clients.decode.ts';
import { type ClientRecord, findClientRecord, listClientRecords, tryInsertClient } from './clients.repo.ts';
import type { CreateClientInput } from './clients.schema.ts';
import {
  checkSamlSettings,
  findSamlSettings,
  insertSamlSettings,
  type SamlSettings,
  samlSettingsOf,
} from './saml-clients.ts';
import { insertServicePrincipal } from './service-principals.repo.ts';
import { tlsInputOf, tlsSettingsOf } from './tls-client-auth-rules.ts';

export interface ClientsDeps {
  db: Db;
  keyring: RootKeyring | null;
  config: Pick<Config, 'environment'>;
}

/** A request's Call: who acts, when, and the request that caused it. */
export interface Change extends Call {
  correlationId: string;
}

export interface ClientView {
  record: ClientRecord;
  secrets: ClientSecretMetadata[];
  /** The SAML settings of a saml client (saml-clients.ts). */
  saml?: SamlSettings | null;
}

const ALL_GIVEN: GivenMembers = {
  redirectUris: true,
  postLogoutRedirectUris: true,
  allowedOrigins: true,
  jwks: true,
  tlsClientAuth: true,
};

export const hasSecrets = (method: string) => SECRET_AUTH_METHODS.has(method);

export function needKeyring(deps: ClientsDeps): RootKeyring {
  // Secret verifiers are keyed with a key derived from the root key; without one none can be made.
  if (!deps.keyring)
    throw problem.unavailable('no root key is configured, so no client secret can be issued');
  return deps.keyring;
}

export async function viewOf(q: Tx | Db, realmId: string, clientId: string, now: Date): Promise<ClientView> {
  const record = await findClientRecord(q, realmId, clientId);
  if (!record) throw problem.notFound('no such client');
  const secrets = hasSecrets(record.token_endpoint_auth_method)
    ? await listActiveSecrets(q, realmId, record.id, now)
    : [];
  const saml = record.type === 'saml' ? await findSamlSettings(q, realmId, record.id) : null;
  return { record, secrets, saml };
}

const draftOf = (input: CreateClientInput, now: Date | null = null): ClientDraft => ({
  type: input.type,
  tokenEndpointAuthMethod: input.tokenEndpointAuthMethod ?? defaultAuthMethod(input.type),
  grantTypes: input.grantTypes ?? defaultGrantTypes(input.type),
  redirectUris: input.redirectUris ?? [],
  postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
  allowedOrigins: input.allowedOrigins ?? [],
  backchannelLogoutUri: input.backchannelLogoutUri ?? null,
  jwks: input.jwks ?? null,
  ...withTls(tlsInputOf(input), now),
});

const withTls = (tls: ClientDraft['tlsClientAuth'], now: Date | null) => ({
  ...(tls ? { tlsClientAuth: tls } : {}),
  ...(now ? { now } : {}),
});

/** The SAML settings a saml client needs and no other client may have. */
function samlProblems(input: CreateClientInput, env: ClientsDeps['config']['environment']) {
  if (input.type !== 'saml')
    return input.saml === undefined
      ? []
      : [{ field: 'saml', code: 'not_allowed', detail: 'only for type saml' }];
  if (input.saml === undefined)
    return [{ field: 'saml', code: 'required', detail: 'a saml client needs it' }];
  return checkSamlSettings(samlSettingsOf(input.saml), env);
}

/** The rules a new client's members must meet (what createClient refuses with 422). */
export const newClientProblems = (input: CreateClientInput, env: ClientsDeps['config']['environment']) => [
  ...checkClientDraft(draftOf(input), env, ALL_GIVEN).errors,
  ...samlProblems(input, env),
];

export interface CreateClientOptions {
  /**
   * Issue the first secret of a confidential client (default). The configuration import creates
   * clients without one: nobody would see it, so an administrator issues one afterwards.
   */
  issueSecret?: boolean;
}

export async function createClient(
  deps: ClientsDeps,
  input: CreateClientInput,
  c: Change,
  opts: CreateClientOptions = {},
): Promise<{ view: ClientView; issued: IssuedClientSecret | null }> {
  const draft = draftOf(input, c.now);
  const verdict = checkClientDraft(draft, deps.config.environment, ALL_GIVEN);
  const errors = [...verdict.errors, ...samlProblems(input, deps.config.environment)];
  if (errors.length > 0) throw problem.validation(errors);
  const keyring =
    hasSecrets(draft.tokenEndpointAuthMethod) && opts.issueSecret !== false ? needKeyring(deps) : null;

  return inChange(deps.db, c, async (tx, record) => {
    const row = await tryInsertClient(
      tx,
      c.realmId,
      {
        clientId: input.clientId,
        name: input.name,
        description: input.description ?? null,
        type: draft.type,
        redirectUris: draft.redirectUris,
        postLogoutRedirectUris: draft.postLogoutRedirectUris,
        allowedOrigins: verdict.allowedOrigins,
        grantTypes: draft.grantTypes,
        tokenEndpointAuthMethod: draft.tokenEndpointAuthMethod,
        consentMode: input.consentMode ?? 'implicit',
        requireMfa: input.tokenPolicy?.requireMfa ?? false,
        allowRememberMe: input.allowRememberMe ?? true,
        idTokenClaims: input.idTokenClaims ?? 'standard',
        requirePushedRequests: input.requirePushedAuthorizationRequests ?? false,
        backchannelLogoutUri: input.backchannelLogoutUri ?? null,
        backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired ?? false,
        jwks: draft.jwks,
        tlsClientAuth: tlsSettingsOf(draft.tokenEndpointAuthMethod, draft.tlsClientAuth),
      },
      c.now,
    );
    if (!row) throw problem.conflict(`client_id ${input.clientId} is already taken in this realm`);
    if (input.saml && !(await insertSamlSettings(tx, c.realmId, row.id, samlSettingsOf(input.saml))))
      throw problem.conflict('another SAML client of this realm has this entity_id');
    await auditClient(record, 'client.created', row.id, {
      client_id: row.client_id,
      type: row.type,
      grant_types: row.grant_types,
      token_endpoint_auth_method: row.token_endpoint_auth_method,
    });
    if (row.type === 'service') {
      const principal = await insertServicePrincipal(tx, c.realmId, row.id, c.now);
      await auditClient(record, 'service_principal.created', row.id, {
        client_id: row.client_id,
        service_principal_id: principal.id,
      });
    }
    const issued = keyring
      ? await issueClientSecret(tx, keyring, c.realmId, row.id, c.now, {
          actor: c.actor,
          correlationId: c.correlationId,
        })
      : null;
    return { view: await viewOf(tx, c.realmId, row.client_id, c.now), issued };
  });
}

export const getClient = (deps: ClientsDeps, realmId: string, clientId: string, now: Date) =>
  viewOf(deps.db, realmId, clientId, now);

export interface ClientPage {
  items: ClientView[];
  nextCursor: string | null;
}

export async function listClients(
  deps: ClientsDeps,
  realmId: string,
  query: ListQuery,
  now: Date,
): Promise<ClientPage> {
  const bound = {
    realm: realmId,
    route: 'clients',
    filter: `type=${query.type ?? ''}&state=${query.state ?? ''}`,
  };
  const after = query.cursor === null ? null : decodeCursor(query.cursor, bound);
  const filter = {
    ...(query.type ? { type: query.type } : {}),
    ...(query.state ? { state: query.state } : {}),
  };
  const rows = await listClientRecords(deps.db, realmId, filter, after, query.limit + 1);
  const page = rows.slice(0, query.limit);
  const secrets = await listActiveSecretsOfClients(
    deps.db,
    realmId,
    page.filter((r) => hasSecrets(r.token_endpoint_auth_method)).map((r) => r.id),
    now,
  );
  const last = page[page.length - 1];
  return {
    items: page.map((record) => ({ record, secrets: secrets.get(record.id) ?? [] })),
    nextCursor: rows.length > query.limit && last ? encodeCursor({ ...bound, after: last.id }) : null,
  };
}

// ---- records -----------------------------------------------------------------------------------

type ClientAuditType =
  | 'client.created'
  | 'client.updated'
  | 'client.state_changed'
  | 'service_principal.created'
  | 'service_principal.state_changed';

export const auditClient = (
  record: Recorder,
  type: ClientAuditType,
  clientRowId: string,
  data: Record<string, unknown>,
) =>
  record.audit(type, {
    category: 'configuration',
    target: { type: 'client', id: clientRowId },
    // One alert per administrative action; the principal's records ride along with its client's.
    ...(type.startsWith('client.') ? { signal: 'configuration_change' as const } : {}),
    data,
  });
