// Starting a transaction from an authorization request: the same checks for the browser entry
// (GET /oauth/authorize) and the headless one (POST /auth/transactions). Errors are sorted by
// whether the redirect URI can be trusted to receive them (RFC 6749 section 4.1.2.1).

import { redirectUrisOf } from '../clients/builtin-clients.ts';
import type { ClientRow } from '../clients/index.ts';
import { matchRedirectUri } from '../clients/redirect-uri.ts';
import type { GrantTypeControls } from '../emergency/grant-type-controls.ts';
import { OAuthError } from '../kernel/oauth-error.ts';
import { isS256Challenge } from '../kernel/pkce.ts';
import { parseScopeParam } from '../kernel/scope.ts';
import { hasNul, withoutNul } from '../kernel/text.ts';
import type { Queryable } from '../platform/db/db.ts';
import { cutUtf8, utf8Length } from '../platform/utf8.ts';
import type { RealmRow } from '../realms/index.ts';
import type { ResourceDefinition } from '../resources/resource.ts';
import { resolveTarget } from '../resources/resource-target.ts';
import { registrationMode } from './registration-policy.ts';
import { scopeDemands, withScopeDemands } from './scope-demands.ts';
import { StartReads } from './start-reads.ts';
import type { Intent, ResponseMode, SigninTx } from './transaction.ts';

export const MAX_RESOURCES = 5;
export const MAX_AUTHORIZE_LOGIN_HINT_BYTES = 512;
const STORED_LOGIN_HINT_BYTES = 254;
const STORED_UI_LOCALES_BYTES = 64;
const STORED_USER_AGENT_BYTES = 256;
// `create` (OpenID Connect Prompt Create) asks for registration: the browser's intent register.
const PROMPTS = new Set(['none', 'login', 'consent', 'select_account', 'create']);
const RESPONSE_MODES = new Set<ResponseMode>(['query', 'query.jwt', 'jwt']);

export interface StartInput {
  clientId?: string;
  redirectUri?: string;
  responseType?: string;
  scope?: string;
  resource?: string[];
  state?: string;
  nonce?: string;
  codeChallenge?: string;
  codeChallengeMethod?: string;
  organization?: string;
  loginHint?: string;
  uiLocales?: string;
  intent?: string;
  prompt?: string;
  maxAge?: number;
  acrValues?: string;
  claims?: string;
  /** A request object (RFC 9101), replaced by its parameters before validation. */
  request?: string;
  /** A pushed request (RFC 9126), replaced by its parameters before validation. */
  requestUri?: string;
  deviceUserCode?: string;
  responseMode?: string;
  userAgent?: string;
}

/** The validated request: the transaction's request fields, with the client row itself. */
export type StartParams = Pick<
  SigninTx,
  | 'redirectUri'
  | 'responseMode'
  | 'scopes'
  | 'resources'
  | 'state'
  | 'nonce'
  | 'codeChallenge'
  | 'prompt'
  | 'maxAge'
  | 'acrValues'
  | 'loginHint'
  | 'uiLocales'
  | 'userAgent'
  | 'organization'
  | 'intent'
> & { client: ClientRow };

/** `direct`: answer the caller (400); `redirect`: send the error to the validated redirect URI. */
export type StartError =
  | { kind: 'direct'; error: string; detail: string }
  | {
      kind: 'redirect';
      error: string;
      detail: string;
      target: { redirectUri: string; responseMode: ResponseMode; client: ClientRow; state: string | null };
    };

export type StartResult = { ok: true; params: StartParams } | { ok: false; failure: StartError };

const direct = (error: string, detail: string): StartResult => ({
  ok: false,
  failure: { kind: 'direct', error, detail },
});

function isAbsoluteResource(r: string): boolean {
  if (r.startsWith('builtin:')) return ['builtin:account', 'builtin:admin', 'builtin:userinfo'].includes(r);
  return /^[a-z][a-z0-9+.-]*:[^\s#]+$/i.test(r) && !r.includes('#');
}

/** The first parameter that carries a NUL; the cut fields are cleaned instead. */
function nulParameter(input: StartInput): string | null {
  const { loginHint: _h, uiLocales: _l, userAgent: _a, resource, maxAge: _m, ...rest } = input;
  for (const [name, value] of Object.entries(rest))
    if (typeof value === 'string' && hasNul(value)) return name;
  return resource?.some(hasNul) ? 'resource' : null;
}

/**
 * The audiences of the requested resources (a builtin:<name> id becomes its URI), or why one of
 * them cannot be granted to the client (RFC 8707).
 */
export async function grantedAudiences(
  q: Queryable,
  realm: RealmRow,
  publicOrigin: string,
  client: ClientRow,
  resources: readonly string[],
): Promise<
  { ok: true; audiences: string[]; definitions: ResourceDefinition[] } | { ok: false; refused: string }
> {
  const audiences: string[] = [];
  const definitions: ResourceDefinition[] = [];
  for (const resource of resources) {
    try {
      const target = await resolveTarget(q, realm, publicOrigin, client, resource, 'user');
      audiences.push(target.resource.audience);
      definitions.push(target.resource);
    } catch (e) {
      if (e instanceof OAuthError)
        return { ok: false, refused: `${e.description ?? 'resource refused'}: ${resource}` };
      throw e;
    }
  }
  return { ok: true, audiences, definitions };
}

/** A start field cut to its stored size (spec doc 1, start-field length handling). */
const cutField = (value: string | undefined, maxBytes: number): string | null =>
  value === undefined ? null : cutUtf8(withoutNul(value), maxBytes);

export async function validateStart(
  q: Queryable,
  realm: RealmRow,
  input: StartInput,
  channel: 'authorize' | 'headless',
  publicOrigin: string,
  grantTypes: Pick<GrantTypeControls, 'isDisabled'>,
  reads: StartReads = new StartReads(q, realm.id),
): Promise<StartResult> {
  const nul = nulParameter(input);
  if (nul) return direct('invalid_request', `${nul} must not contain a NUL character`);
  const client = input.clientId ? await reads.client(input.clientId) : null;
  if (client?.state !== 'active') return direct('invalid_request', 'unknown or inactive client_id');
  if (
    !input.redirectUri ||
    !matchRedirectUri(input.redirectUri, redirectUrisOf(client, publicOrigin), client.type)
  ) {
    return direct('invalid_request', 'redirect_uri is missing or not registered for this client');
  }
  const responseMode = (input.responseMode ?? 'query') as ResponseMode;
  if (!RESPONSE_MODES.has(responseMode)) return direct('invalid_request', 'unsupported response_mode');
  if (input.loginHint !== undefined && utf8Length(input.loginHint) > MAX_AUTHORIZE_LOGIN_HINT_BYTES) {
    if (channel === 'authorize') return direct('invalid_request', 'login_hint is longer than 512 bytes');
  }
  const state = input.state ?? null;
  const redirect = (error: string, detail: string): StartResult => ({
    ok: false,
    failure: {
      kind: 'redirect',
      error,
      detail,
      target: { redirectUri: input.redirectUri as string, responseMode, client, state },
    },
  });
  // The headless API answers its caller directly; only the browser entry redirects errors.
  const fail = channel === 'authorize' ? redirect : direct;

  if (channel === 'authorize' && input.responseType === undefined) {
    return fail('invalid_request', 'response_type is required');
  }
  if (channel === 'authorize' && input.responseType !== 'code') {
    return fail('unsupported_response_type', 'response_type must be code');
  }
  if (!client.grant_types.includes('authorization_code')) {
    return fail('unauthorized_client', 'the client may not use the authorization code flow');
  }
  // An emergency control can turn the code flow off for the whole realm (docs/emergency.md).
  if (await grantTypes.isDisabled(realm.id, 'authorization_code', q)) {
    return fail('unsupported_response_type', 'the authorization code flow is turned off in this realm');
  }
  // request and request_uri are replaced by their parameters first (authorization-request.ts).
  if (input.request !== undefined || input.requestUri !== undefined)
    return direct('invalid_request', 'request and request_uri cannot be nested');
  if (input.deviceUserCode !== undefined)
    return fail('invalid_request', 'device_user_code needs intent device');
  if (input.codeChallengeMethod !== 'S256' || !isS256Challenge(input.codeChallenge)) {
    return fail(
      'invalid_request',
      'PKCE is required: code_challenge of 43 characters with code_challenge_method S256',
    );
  }
  const scopes = parseScopeParam(input.scope ?? 'openid');
  if (!scopes.ok) return fail('invalid_scope', `scope is ${scopes.reason.replace('_', ' ')}`);
  const resources = input.resource ?? [];
  if (resources.length > MAX_RESOURCES) return fail('invalid_target', `at most ${MAX_RESOURCES} resources`);
  if (!resources.every(isAbsoluteResource)) return fail('invalid_target', 'resource must be an absolute URI');
  const audiences = await grantedAudiences(q, realm, publicOrigin, client, resources);
  if (!audiences.ok) return fail('invalid_target', audiences.refused);
  const prompt = input.prompt ? input.prompt.split(' ') : [];
  if (!prompt.every((p) => PROMPTS.has(p))) return fail('invalid_request', 'unknown prompt value');
  if (prompt.includes('none')) {
    if (channel === 'headless')
      return direct('invalid_request', 'prompt=none cannot start an interactive transaction');
    // The authorization endpoint answers prompt=none itself from the browser's SSO session.
    if (prompt.length > 1) return fail('invalid_request', 'prompt=none cannot be combined with other values');
  }
  if (input.maxAge !== undefined && (!Number.isSafeInteger(input.maxAge) || input.maxAge < 0)) {
    return fail('invalid_request', 'max_age must be a non-negative integer');
  }
  if (input.claims !== undefined) {
    try {
      const parsed: unknown = JSON.parse(input.claims);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object');
    } catch {
      return fail('invalid_request', 'claims must be a JSON object');
    }
  }
  const intent = (prompt.includes('create') ? 'register' : (input.intent ?? 'login')) as Intent;
  // step_up asks for a second factor on top of the browser's session (spec doc 1, "MFA is required
  // when"); the headless start takes login or register only (spec doc 1, headless start body).
  const stepUp = intent === 'step_up' && channel === 'authorize';
  if (intent !== 'login' && intent !== 'register' && !stepUp)
    return fail('invalid_request', 'intent must be login or register');
  if (intent === 'register' && registrationMode(await reads.policy()) === 'closed')
    return fail('access_denied', 'registration is not available in this realm');
  const demanded = withScopeDemands(
    {
      maxAge: input.maxAge ?? null,
      acrValues: input.acrValues ? input.acrValues.split(' ').filter(Boolean) : [],
    },
    scopeDemands(audiences.definitions, scopes.scopes),
  );

  return {
    ok: true,
    params: {
      client,
      redirectUri: input.redirectUri,
      responseMode,
      scopes: scopes.scopes,
      resources: [...new Set(audiences.audiences)],
      state,
      nonce: input.nonce ?? null,
      codeChallenge: input.codeChallenge,
      prompt: prompt.filter((p) => p !== 'create'),
      maxAge: demanded.maxAge,
      acrValues: demanded.acrValues,
      loginHint: cutField(input.loginHint, STORED_LOGIN_HINT_BYTES),
      uiLocales: cutField(input.uiLocales, STORED_UI_LOCALES_BYTES),
      userAgent: cutField(input.userAgent, STORED_USER_AGENT_BYTES),
      organization: input.organization ?? null,
      intent,
    },
  };
}
