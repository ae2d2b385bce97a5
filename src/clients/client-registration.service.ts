// Dynamic client registration (RFC 7591) and its management (RFC 7592) under the realm policy
// client_registration (docs/oauth-registration.md). A registration without an initial access token
// is always held for an administrator, and so is every registration under require_approval: the
// client exists but stays disabled (no sign-in, no tokens) until approved. Registered clients are
// third-party clients: they always ask for consent. Every change writes its rows, its audit record
// and its events in one transaction.
import { type Recorder, recorder } from '../audit/index.ts';
import type { Actor } from '../kernel/call.ts';
import { digestToken } from '../kernel/digest.ts';
import { spendBudgets } from '../platform/abuse-budget.ts';
import type { Tx } from '../platform/db/db.ts';
import { secretsEqual } from '../platform/http/bearer.ts';
import type { FieldError } from '../platform/http/problem.ts';
import { newId, randomToken, ulid } from '../platform/ids.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';
import { issueClientSecret } from './client-secrets.ts';
import {
  type ClientRecord,
  type ClientState,
  findClientRecord,
  tryInsertClient,
  updateClientOidcScopes,
  updateClientSettings,
  updateClientState,
} from './clients.repo.ts';
import { type ClientsDeps, hasSecrets, needKeyring } from './clients.service.ts';
import {
  insertRegistration,
  lockRegistration,
  type RegistrationRow,
  spendInitialAccessToken,
  updateRegistration,
} from './registration.repo.ts';
import { type RegisteredMetadata, readClientMetadata } from './registration-metadata.ts';
import { tlsSettingsOf } from './tls-client-auth-rules.ts';

/** Document 2, Limits: registrations per hour per client network and per realm. */
export const REGISTRATIONS_PER_NETWORK_HOUR = 20;
export const REGISTRATIONS_PER_REALM_HOUR = 500;
const HOUR_MS = 3_600_000;

const DEFAULT_OPEN_SCOPES = ['openid', 'profile', 'email'];

export interface RegistrationPolicy {
  enabled: boolean;
  open: boolean;
  requireApproval: boolean;
  openScopes: string[];
}

/** The realm's client_registration policy with the defaults of document 1 filled in. */
export async function registrationPolicyOf(deps: ClientsDeps, realmId: string): Promise<RegistrationPolicy> {
  const p = await currentPolicy(deps.db, realmId);
  const scopes = policyValue(p, 'client_registration', 'open_scopes');
  return {
    enabled: policyValue(p, 'client_registration', 'enabled') === true,
    open: policyValue(p, 'client_registration', 'open') === true,
    requireApproval: policyValue(p, 'client_registration', 'require_approval') === true,
    openScopes: Array.isArray(scopes)
      ? scopes.filter((s): s is string => typeof s === 'string')
      : DEFAULT_OPEN_SCOPES,
  };
}

/**
 * A refusal of the registration endpoints, in their own error form (RFC 7591 section 3.2.2,
 * RFC 6750 section 3): `error` for OAuth libraries, `code` for readers of this service's problem
 * codes (document 1, Errors).
 */
export class RegistrationError extends Error {
  readonly status: number;
  readonly error: string;
  readonly code: string;
  readonly description: string;
  readonly errors: FieldError[];
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    error: string,
    code: string,
    description: string,
    errors: FieldError[] = [],
    headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
    this.name = 'RegistrationError';
    this.status = status;
    this.error = error;
    this.code = code;
    this.description = description;
    this.errors = errors;
    this.headers = headers;
  }
}

const challenge = (realmName: string, withError: boolean) =>
  `Bearer realm="${realmName}"${withError ? ', error="invalid_token"' : ''}`;

const invalidToken = (realmName: string, description: string, presented = true) =>
  new RegistrationError(401, 'invalid_token', 'unauthorized', description, [], {
    'www-authenticate': challenge(realmName, presented),
  });

export const disabledRegistration = () =>
  new RegistrationError(
    404,
    'feature_disabled',
    'feature_disabled',
    'client registration is not enabled in this realm',
  );

export interface RealmRef {
  id: string;
  name: string;
}

export interface RegistrationRequest {
  body: unknown;
  /** The bearer token of the request, if any: an initial access token. */
  token: string | null;
  /** The caller's network (/24, /64) for its hourly budget; null when unknown. */
  network: string | null;
  correlationId: string;
  now: Date;
}

/** What the registration and management endpoints answer about a client (RFC 7591 section 3.2.1). */
export interface RegistrationAnswer {
  record: ClientRecord;
  status: RegistrationRow['status'];
  display: Record<string, unknown>;
  clientSecret: string | null;
  /** When the issued secret expires (machine.client_secret_max_lifetime_days); null: never. */
  clientSecretExpiresAt?: Date | null;
  registrationToken: string | null;
}

const newRegistrationToken = () => `pa_rat_${randomToken(32)}`;

/** Spends the hourly budgets (document 2, Limits) before anything is read or written. */
async function spendRegistrationBudgets(
  deps: ClientsDeps,
  realmId: string,
  network: string | null,
  now: Date,
) {
  const budgets = [
    { bucket: `dcr:realm:${realmId}`, limit: REGISTRATIONS_PER_REALM_HOUR, windowMs: HOUR_MS },
  ];
  if (network)
    budgets.push({
      bucket: `dcr:net:${realmId}:${network}`,
      limit: REGISTRATIONS_PER_NETWORK_HOUR,
      windowMs: HOUR_MS,
    });
  const verdict = await spendBudgets(deps.db, budgets, now);
  if (!verdict.ok)
    throw new RegistrationError(
      429,
      'rate_limited',
      'rate_limited',
      'too many client registrations; try again later',
      [],
      {
        'retry-after': String(verdict.retryAfterSeconds),
      },
    );
}

function metadataOrThrow(body: unknown, policy: RegistrationPolicy, deps: ClientsDeps): RegisteredMetadata {
  const m = readClientMetadata(body, policy.openScopes, deps.config.environment);
  if (!m.ok) {
    const what =
      m.error === 'invalid_redirect_uri' ? 'a redirect URI is refused' : 'the client metadata is refused';
    throw new RegistrationError(400, m.error, 'validation_failed', what, m.errors);
  }
  return m;
}

/** POST /realms/{realm}/oauth/register. */
export async function registerClient(
  deps: ClientsDeps,
  realm: RealmRef,
  r: RegistrationRequest,
): Promise<RegistrationAnswer> {
  const policy = await registrationPolicyOf(deps, realm.id);
  if (!policy.enabled) throw disabledRegistration();
  await spendRegistrationBudgets(deps, realm.id, r.network, r.now);
  if (r.token === null && !policy.open)
    throw invalidToken(realm.name, 'an initial access token is required to register a client', false);
  const m = metadataOrThrow(r.body, policy, deps);
  const keyring = hasSecrets(m.draft.tokenEndpointAuthMethod) ? needKeyring(deps) : null;

  return deps.db.tx(async (tx) => {
    const iat =
      r.token === null ? null : await spendInitialAccessToken(tx, realm.id, digestToken(r.token), r.now);
    if (r.token !== null && !iat) throw invalidToken(realm.name, 'the initial access token is not valid');
    const held = iat === null || policy.requireApproval;
    const clientId = `dcr-${ulid(r.now.getTime())}`;
    const row = await tryInsertClient(
      tx,
      realm.id,
      {
        clientId,
        name: m.name ?? clientId,
        type: m.type,
        redirectUris: m.draft.redirectUris,
        postLogoutRedirectUris: m.draft.postLogoutRedirectUris,
        allowedOrigins: m.draft.allowedOrigins,
        grantTypes: m.draft.grantTypes,
        tokenEndpointAuthMethod: m.draft.tokenEndpointAuthMethod,
        consentMode: 'required',
        jwks: m.draft.jwks,
        tlsClientAuth: tlsSettingsOf(m.draft.tokenEndpointAuthMethod, m.draft.tlsClientAuth),
        backchannelLogoutUri: m.draft.backchannelLogoutUri ?? null,
        backchannelLogoutSessionRequired: m.backchannelLogoutSessionRequired,
        state: held ? 'disabled' : 'active',
        oidcScopes: m.scopes,
      },
      r.now,
    );
    if (!row) throw new Error('a fresh client id was taken');
    const actor: Actor = { type: 'client', id: row.id };
    const call = { realmId: realm.id, actor, correlationId: r.correlationId, now: r.now };
    const issued = keyring
      ? await issueClientSecret(tx, keyring, realm.id, row.id, r.now, {
          actor,
          correlationId: r.correlationId,
        })
      : null;
    const token = newRegistrationToken();
    const display = m.display;
    await insertRegistration(
      tx,
      realm.id,
      {
        clientRowId: row.id,
        status: held ? 'pending' : 'approved',
        initialAccessTokenId: iat?.id ?? null,
        tokenDigest: digestToken(token),
        metadata: { ...display, scope: m.scopes.join(' ') },
      },
      r.now,
    );
    await recorder(tx, call).audit('client.registered', {
      category: 'configuration',
      target: { type: 'client', id: row.id },
      signal: 'configuration_change',
      data: {
        client_id: row.client_id,
        type: row.type,
        status: held ? 'pending' : 'approved',
        initial_access_token_id: iat?.id ?? null,
        redirect_uris: row.redirect_uris,
        backchannel_logout_uri: m.draft.backchannelLogoutUri ?? null,
        scope: m.scopes.join(' '),
      },
    });
    const record = await findClientRecord(tx, realm.id, clientId);
    if (!record) throw new Error('the registered client vanished');
    return {
      record,
      status: held ? 'pending' : 'approved',
      display: { ...display, scope: m.scopes.join(' ') },
      clientSecret: issued?.secret ?? null,
      clientSecretExpiresAt: issued?.expiresAt ?? null,
      registrationToken: token,
    };
  });
}

// ---- RFC 7592 ------------------------------------------------------------------------------------

export interface ManagementRequest {
  clientId: string;
  token: string | null;
  correlationId: string;
  now: Date;
}

/**
 * The registration the presented registration access token belongs to, locked; 401 otherwise
 * (unknown client, ended or wrong token alike, so the answer never tells which).
 */
async function authorizedRegistration(
  tx: Tx,
  realm: RealmRef,
  r: ManagementRequest,
): Promise<{ reg: RegistrationRow; record: ClientRecord }> {
  const refused = () =>
    invalidToken(realm.name, 'the registration access token is not valid', r.token !== null);
  if (r.token === null) throw refused();
  const reg = await lockRegistration(tx, realm.id, r.clientId);
  const stored = reg?.registration_token_digest ?? null;
  // Compared in constant time even when there is nothing to compare with.
  const match = secretsEqual(digestToken(r.token), stored ?? '');
  if (!reg || stored === null || !match) throw refused();
  const record = await findClientRecord(tx, realm.id, r.clientId);
  if (!record) throw refused();
  return { reg, record };
}

const callOf = (realm: RealmRef, record: ClientRecord, r: ManagementRequest) => ({
  realmId: realm.id,
  actor: { type: 'client' as const, id: record.id },
  correlationId: r.correlationId,
  now: r.now,
});

/** GET: the client's registration, answered with a new registration access token. */
export async function readRegistration(
  deps: ClientsDeps,
  realm: RealmRef,
  r: ManagementRequest,
): Promise<RegistrationAnswer> {
  const policy = await registrationPolicyOf(deps, realm.id);
  if (!policy.enabled) throw disabledRegistration();
  return deps.db.tx(async (tx) => {
    const { reg, record } = await authorizedRegistration(tx, realm, r);
    const token = newRegistrationToken();
    await updateRegistration(
      tx,
      realm.id,
      record.id,
      { status: reg.status, tokenDigest: digestToken(token) },
      r.now,
    );
    return {
      record,
      status: reg.status,
      display: reg.metadata,
      clientSecret: null,
      registrationToken: token,
    };
  });
}

// Members whose change puts a client that needed approval back in the queue: where it may send
// people, where this service sends logout tokens about them, and what it may ask for.
const REVIEWED = [
  'redirect_uris',
  'post_logout_redirect_uris',
  'backchannel_logout_uri',
  'grant_types',
  'scope',
] as const;

/**
 * PUT: replaces the client's metadata (RFC 7592 section 2.2). client_id must be the client's; the
 * authentication method cannot change. A client that was held for approval goes back to the queue
 * when it changes where it sends people or what it asks for.
 */
export async function replaceRegistration(
  deps: ClientsDeps,
  realm: RealmRef,
  r: ManagementRequest & { body: unknown },
): Promise<RegistrationAnswer> {
  const policy = await registrationPolicyOf(deps, realm.id);
  if (!policy.enabled) throw disabledRegistration();
  return deps.db.tx(async (tx) => {
    const { reg, record } = await authorizedRegistration(tx, realm, r);
    const body = r.body as Record<string, unknown> | null;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      if (body.client_id !== record.client_id)
        throw new RegistrationError(
          400,
          'invalid_client_metadata',
          'validation_failed',
          "client_id must be the client's own",
          [{ field: 'client_id', code: 'immutable' }],
        );
    }
    const {
      client_id: _id,
      client_secret: _s,
      registration_access_token: _t,
      registration_client_uri: _u,
      client_id_issued_at: _i,
      client_secret_expires_at: _e,
      ...rest
    } = (body ?? {}) as Record<string, unknown>;
    const m = metadataOrThrow(
      { token_endpoint_auth_method: record.token_endpoint_auth_method, ...rest },
      policy,
      deps,
    );
    if (m.draft.tokenEndpointAuthMethod !== record.token_endpoint_auth_method || m.type !== record.type)
      throw new RegistrationError(
        400,
        'invalid_client_metadata',
        'validation_failed',
        'the authentication method and application type cannot change',
        [{ field: 'token_endpoint_auth_method', code: 'immutable' }],
      );
    const scope = m.scopes.join(' ');
    const before: Record<(typeof REVIEWED)[number], string> = {
      redirect_uris: JSON.stringify(record.redirect_uris),
      post_logout_redirect_uris: JSON.stringify(record.post_logout_redirect_uris),
      backchannel_logout_uri: record.backchannel_logout_uri ?? '',
      grant_types: JSON.stringify(record.grant_types),
      scope: String(reg.metadata.scope ?? ''),
    };
    const after: typeof before = {
      redirect_uris: JSON.stringify(m.draft.redirectUris),
      post_logout_redirect_uris: JSON.stringify(m.draft.postLogoutRedirectUris),
      backchannel_logout_uri: m.draft.backchannelLogoutUri ?? '',
      grant_types: JSON.stringify(m.draft.grantTypes),
      scope,
    };
    const reviewedChanges = REVIEWED.filter((k) => before[k] !== after[k]);
    const neededApproval = reg.initial_access_token_id === null || policy.requireApproval;
    const holdAgain = reg.status === 'approved' && neededApproval && reviewedChanges.length > 0;
    const status = holdAgain ? 'pending' : reg.status;

    await updateClientSettings(
      tx,
      realm.id,
      record.id,
      {
        name: m.name ?? record.client_id,
        description: record.description,
        redirectUris: m.draft.redirectUris,
        postLogoutRedirectUris: m.draft.postLogoutRedirectUris,
        allowedOrigins: m.draft.allowedOrigins,
        grantTypes: m.draft.grantTypes,
        consentMode: 'required',
        requireMfa: record.require_mfa,
        allowRememberMe: record.allow_remember_me,
        idTokenClaims: record.id_token_claims,
        requirePushedRequests: record.require_pushed_authorization_requests,
        backchannelLogoutUri: m.draft.backchannelLogoutUri ?? null,
        backchannelLogoutSessionRequired: m.backchannelLogoutSessionRequired,
        jwks: m.draft.jwks,
        tlsClientAuth: tlsSettingsOf(m.draft.tokenEndpointAuthMethod, m.draft.tlsClientAuth),
      },
      r.now,
    );
    await updateClientOidcScopes(tx, realm.id, record.id, m.scopes);
    const token = newRegistrationToken();
    const metadata = { ...m.display, scope };
    await updateRegistration(
      tx,
      realm.id,
      record.id,
      { status, tokenDigest: digestToken(token), metadata },
      r.now,
    );
    await recordRegistrationChange(tx, recorder(tx, callOf(realm, record, r)), record, {
      type: 'client.registration.updated',
      now: r.now,
      ...(holdAgain ? { move: { state: 'disabled' as const, event: 'suspended' as const } } : {}),
      data: { status, reviewed_changes: reviewedChanges },
    });
    const updated = await findClientRecord(tx, realm.id, record.client_id);
    if (!updated) throw new Error('the registered client vanished');
    return { record: updated, status, display: metadata, clientSecret: null, registrationToken: token };
  });
}

/**
 * DELETE: the client is decommissioned (disabled for good, its registration access token ended);
 * its client_id stays taken, so nothing issued to it can be mistaken for another client's.
 */
export async function deleteRegistration(
  deps: ClientsDeps,
  realm: RealmRef,
  r: ManagementRequest,
): Promise<void> {
  const policy = await registrationPolicyOf(deps, realm.id);
  if (!policy.enabled) throw disabledRegistration();
  await deps.db.tx(async (tx) => {
    const { record } = await authorizedRegistration(tx, realm, r);
    await endRegistration(tx, recorder(tx, callOf(realm, record, r)), realm.id, record, 'deleted', r.now);
  });
}

type RegistrationAuditType =
  | 'client.registration.updated'
  | 'client.registration.deleted'
  | 'client.registration.approved'
  | 'client.registration.rejected';

/**
 * One change of a registered client as its evidence: the client moved to `state` (when it is not
 * there yet) with its catalog event, and the audit record of the registration change.
 */
export async function recordRegistrationChange(
  tx: Tx,
  rec: Recorder,
  record: ClientRecord,
  change: {
    type: RegistrationAuditType;
    now: Date;
    move?: { state: ClientState; event: 'active' | 'suspended' | 'decommissioned' };
    data: Record<string, unknown>;
  },
): Promise<void> {
  if (change.move) {
    if (record.state !== change.move.state)
      await updateClientState(tx, record.realm_id, record.id, change.move.state, change.now);
    await rec.event('client.state_changed', { client_ref: record.client_id, state: change.move.event });
  }
  await rec.audit(change.type, {
    category: 'configuration',
    target: { type: 'client', id: record.id },
    signal: 'configuration_change',
    data: { client_id: record.client_id, previous_state: record.state, ...change.data },
  });
}

/** Ends a registration (deleted by its client, or rejected by an administrator). */
export async function endRegistration(
  tx: Tx,
  rec: Recorder,
  realmId: string,
  record: ClientRecord,
  status: 'deleted' | 'rejected',
  now: Date,
): Promise<void> {
  await updateRegistration(tx, realmId, record.id, { status, tokenDigest: null, decided: true }, now);
  await recordRegistrationChange(tx, rec, record, {
    type: status === 'deleted' ? 'client.registration.deleted' : 'client.registration.rejected',
    now,
    move: { state: 'disabled', event: 'decommissioned' },
    data: { status },
  });
}

export const newInitialAccessTokenId = (now: Date) => newId('iat', now.getTime());
