// Changing a client (docs/api-clients.md): PATCH with optional If-Match, and disable/enable
// with the client's service principal. Events: client.state_changed and
// service_principal.state_changed (spec doc 2, Catalog); settings changes have none.
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Tx } from '../platform/db/db.ts';
import { type FieldError, problem } from '../platform/http/problem.ts';
import { type ClientDraft, checkClientDraft } from './client-rules.ts';
import {
  type ClientRecord,
  type ClientSettings,
  type ClientState,
  lockClientRecord,
  updateClientSettings,
  updateClientState,
} from './clients.repo.ts';
import type { UpdateClientInput } from './clients.schema.ts';
import { auditClient, type Change, type ClientsDeps, type ClientView, viewOf } from './clients.service.ts';
import { registrationStatusOf } from './registration.repo.ts';
import {
  checkSamlSettings,
  findSamlSettings,
  mergeSamlSettings,
  presentSamlSettings,
  type SamlSettings,
  updateSamlSettings,
} from './saml-clients.ts';
import { updateServicePrincipalState } from './service-principals.repo.ts';
import { mergeTlsInput, tlsInputOf, tlsSettingsOf } from './tls-client-auth-rules.ts';

/** The ETag of a client: its version, bumped by every change. */
export const etagOf = (record: ClientRecord): string => `"${record.version}"`;

/** If-Match with strong comparison (RFC 9110 section 13.1.1); `*` matches any existing client. */
function matchesIfMatch(header: string, record: ClientRecord): boolean {
  const tags = header.split(',').map((t) => t.trim());
  return tags.includes('*') || tags.includes(etagOf(record));
}

async function lockChangeable(tx: Tx, realmId: string, clientId: string): Promise<ClientRecord> {
  const record = await lockClientRecord(tx, realmId, clientId);
  if (!record) throw problem.notFound('no such client');
  if (record.builtin) throw problem.conflict('built-in clients cannot be changed');
  return record;
}

export async function updateClient(
  deps: ClientsDeps,
  clientId: string,
  input: UpdateClientInput,
  ifMatch: string | undefined,
  c: Change,
): Promise<ClientView> {
  return inChange(deps.db, c, async (tx, record) => {
    const current = await lockChangeable(tx, c.realmId, clientId);
    if (ifMatch !== undefined && !matchesIfMatch(ifMatch, current)) throw problem.preconditionFailed();
    const errors: FieldError[] = [];
    const immutable: [keyof UpdateClientInput, string, string][] = [
      ['clientId', 'client_id', current.client_id],
      ['type', 'type', current.type],
      ['tokenEndpointAuthMethod', 'token_endpoint_auth_method', current.token_endpoint_auth_method],
    ];
    for (const [key, field, value] of immutable) {
      if (input[key] !== undefined && input[key] !== value) errors.push({ field, code: 'immutable' });
    }
    const next = mergeSettings(current, input);
    const tlsGiven = tlsInputOf(input);
    const tls = tlsGiven ? mergeTlsInput(current.tls_client_auth, tlsGiven) : undefined;
    if (tls) next.tlsClientAuth = tlsSettingsOf(current.token_endpoint_auth_method, tls);
    const draft: ClientDraft = {
      type: current.type,
      tokenEndpointAuthMethod: current.token_endpoint_auth_method,
      grantTypes: next.grantTypes,
      redirectUris: next.redirectUris,
      postLogoutRedirectUris: next.postLogoutRedirectUris,
      allowedOrigins: next.allowedOrigins,
      backchannelLogoutUri: input.backchannelLogoutUri,
      jwks: next.jwks,
      ...(tls ? { tlsClientAuth: tls } : {}),
      now: c.now,
    };
    const verdict = checkClientDraft(draft, deps.config.environment, {
      redirectUris: input.redirectUris !== undefined,
      postLogoutRedirectUris: input.postLogoutRedirectUris !== undefined,
      allowedOrigins: input.allowedOrigins !== undefined,
      jwks: input.jwks !== undefined,
      tlsClientAuth: tls !== undefined,
    });
    errors.push(...verdict.errors);
    const saml = await nextSamlSettings(tx, c.realmId, current, input, deps.config.environment);
    errors.push(...saml.errors);
    if (errors.length > 0) throw problem.validation(errors);
    next.allowedOrigins = verdict.allowedOrigins;

    const changed = changedMembers(current, next);
    if (saml.next) {
      if (!(await updateSamlSettings(tx, c.realmId, current.id, saml.next)))
        throw problem.conflict('another SAML client of this realm has this entity_id');
      changed.push('saml');
    }
    if (changed.length > 0) {
      await updateClientSettings(tx, c.realmId, current.id, next, c.now);
      await auditClient(record, 'client.updated', current.id, {
        client_id: current.client_id,
        members: changed,
        version: current.version + 1,
      });
    }
    return viewOf(tx, c.realmId, clientId, c.now);
  });
}

/** The SAML settings a PATCH makes (null: unchanged), or why they are refused. */
async function nextSamlSettings(
  tx: Tx,
  realmId: string,
  current: ClientRecord,
  input: UpdateClientInput,
  env: ClientsDeps['config']['environment'],
): Promise<{ next: SamlSettings | null; errors: FieldError[] }> {
  if (input.saml === undefined) return { next: null, errors: [] };
  const before = current.type === 'saml' ? await findSamlSettings(tx, realmId, current.id) : null;
  if (!before)
    return { next: null, errors: [{ field: 'saml', code: 'not_allowed', detail: 'only for type saml' }] };
  const next = mergeSamlSettings(before, input.saml);
  const errors = checkSamlSettings(next, env);
  const same = JSON.stringify(presentSamlSettings(next)) === JSON.stringify(presentSamlSettings(before));
  return { next: errors.length > 0 || same ? null : next, errors };
}

function settingsOf(r: ClientRecord): ClientSettings {
  return {
    name: r.name,
    description: r.description,
    redirectUris: r.redirect_uris,
    postLogoutRedirectUris: r.post_logout_redirect_uris,
    allowedOrigins: r.allowed_origins,
    grantTypes: r.grant_types,
    consentMode: r.consent_mode,
    requireMfa: r.require_mfa,
    allowRememberMe: r.allow_remember_me,
    idTokenClaims: r.id_token_claims,
    requirePushedRequests: r.require_pushed_authorization_requests,
    backchannelLogoutUri: r.backchannel_logout_uri,
    backchannelLogoutSessionRequired: r.backchannel_logout_session_required,
    jwks: r.jwks,
    tlsClientAuth: r.tls_client_auth,
  };
}

function mergeSettings(r: ClientRecord, p: UpdateClientInput): ClientSettings {
  const s = settingsOf(r);
  return {
    name: p.name ?? s.name,
    description: p.description === undefined ? s.description : p.description,
    redirectUris: p.redirectUris ?? s.redirectUris,
    postLogoutRedirectUris: p.postLogoutRedirectUris ?? s.postLogoutRedirectUris,
    allowedOrigins: p.allowedOrigins ?? s.allowedOrigins,
    grantTypes: p.grantTypes ?? s.grantTypes,
    consentMode: p.consentMode ?? s.consentMode,
    requireMfa: p.tokenPolicy?.requireMfa ?? s.requireMfa,
    allowRememberMe: p.allowRememberMe ?? s.allowRememberMe,
    idTokenClaims: p.idTokenClaims ?? s.idTokenClaims,
    requirePushedRequests: p.requirePushedAuthorizationRequests ?? s.requirePushedRequests,
    backchannelLogoutUri:
      p.backchannelLogoutUri === undefined ? s.backchannelLogoutUri : p.backchannelLogoutUri,
    backchannelLogoutSessionRequired:
      p.backchannelLogoutSessionRequired ?? s.backchannelLogoutSessionRequired,
    jwks: p.jwks ?? s.jwks,
    tlsClientAuth: s.tlsClientAuth,
  };
}

/** Wire names of the members whose value changes (the audit record lists them). */
function changedMembers(r: ClientRecord, next: ClientSettings): string[] {
  const before = settingsOf(r);
  const wire: Record<keyof ClientSettings, string> = {
    name: 'name',
    description: 'description',
    redirectUris: 'redirect_uris',
    postLogoutRedirectUris: 'post_logout_redirect_uris',
    allowedOrigins: 'allowed_origins',
    grantTypes: 'grant_types',
    consentMode: 'consent_mode',
    requireMfa: 'token_policy',
    allowRememberMe: 'allow_remember_me',
    idTokenClaims: 'id_token_claims',
    requirePushedRequests: 'require_pushed_authorization_requests',
    backchannelLogoutUri: 'backchannel_logout_uri',
    backchannelLogoutSessionRequired: 'backchannel_logout_session_required',
    jwks: 'jwks',
    tlsClientAuth: 'tls_client_auth',
  };
  return (Object.keys(wire) as (keyof ClientSettings)[])
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(next[k]))
    .map((k) => wire[k]);
}

/**
 * Disables or re-enables a client, and with a service client its principal. Asking for the state
 * the client is already in changes nothing and records nothing.
 */
export async function setClientState(
  deps: ClientsDeps,
  clientId: string,
  target: ClientState,
  c: Change,
): Promise<ClientView> {
  return inChange(deps.db, c, async (tx, record) => {
    await setClientStateInTx(tx, record, c, clientId, target);
    return viewOf(tx, c.realmId, clientId, c.now);
  });
}

/** setClientState inside a change already open (an emergency control); answers the state before. */
export async function setClientStateInTx(
  tx: Tx,
  record: Recorder,
  c: Call,
  clientId: string,
  target: ClientState,
): Promise<ClientState> {
  const current = await lockChangeable(tx, c.realmId, clientId);
  // A registered client leaves the approval queue only through approval, and a rejected or deleted
  // registration stays ended (docs/oauth-registration.md).
  if (target === 'active' && current.state !== 'active') {
    const status = await registrationStatusOf(tx, c.realmId, current.id);
    if (status !== null && status !== 'approved')
      throw problem.conflict(
        status === 'pending'
          ? 'this registered client waits for approval: approve it in the registration queue'
          : `this client's registration is ${status}`,
      );
  }
  if (current.state !== target) {
    await updateClientState(tx, c.realmId, current.id, target, c.now);
    // The catalog speaks of clients being suspended and reactivated.
    await record.event('client.state_changed', {
      client_ref: current.client_id,
      state: target === 'disabled' ? 'suspended' : 'active',
    });
    await auditClient(record, 'client.state_changed', current.id, {
      client_id: current.client_id,
      state: target,
      previous_state: current.state,
    });
  }
  if (current.type === 'service') {
    const principal = await updateServicePrincipalState(tx, c.realmId, current.id, target, c.now);
    if (principal) {
      await record.event('service_principal.state_changed', {
        service_principal_id: principal.id,
        state: target,
      });
      await auditClient(record, 'service_principal.state_changed', current.id, {
        client_id: current.client_id,
        service_principal_id: principal.id,
        state: target,
      });
    }
  }
  return current.state;
}
