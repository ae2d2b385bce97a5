// What every grant handler of the token endpoint receives, and the response it builds.
import type { Confirmation } from '../../access/access-token.ts';
import type { AuthenticatedClient } from '../../clients/client-auth.ts';
import { singleParam } from '../../clients/client-auth-request.ts';
import type { TokenClaims } from '../../hooks/index.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import { parseScopeParam } from '../../kernel/scope.ts';
import type { Signer } from '../../keys/key-store.ts';
import type { RealmRow } from '../../realms/index.ts';
import type { ResourceDefinition, ResourceGrant } from '../../resources/resource.ts';
import type { OAuthDeps } from '../oauth.deps.ts';
import type { IssuerSettings } from '../token-issuer.ts';

export interface GrantContext {
  app: OAuthDeps;
  realm: RealmRow;
  form: URLSearchParams;
  caller: AuthenticatedClient;
  signer: Signer;
  settings: IssuerSettings;
  now: Date;
  correlationId: string;
  /** client_credentials: what was read while the client authenticated. */
  prefetched?: ServicePrefetch | null;
  /** The key thumbprint of the request's DPoP proof (RFC 9449 section 5); null without one. */
  dpopJkt?: string | null;
  /** What the realm's before_token_issuance hooks added, called before the grant's transaction. */
  hookClaims?: TokenClaims | null;
}

/** RFC 6749 section 5.1 (and RFC 8693 section 2.2.1 for issued_token_type). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP' | 'N_A';
  expires_in: number;
  scope?: string;
  id_token?: string;
  refresh_token?: string;
  issued_token_type?: string;
}

export const param = (g: GrantContext, name: string): string | null => singleParam(g.form, name);

export function requiredParam(g: GrantContext, name: string): string {
  const v = param(g, name);
  if (v === null) throw oauthError.invalidRequest(`parameter ${name} is required`);
  return v;
}

/** The scope parameter as a list; null when absent. */
export function scopeParam(g: GrantContext): string[] | null {
  const raw = param(g, 'scope');
  if (raw === null) return null;
  const parsed = parseScopeParam(raw);
  if (!parsed.ok) throw oauthError.invalidScope(`scope parameter is ${parsed.reason}`);
  return parsed.scopes;
}

export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/**
 * The parts of a token exchange request every subject token type shares (RFC 8693 section 2.1):
 * no actor token, an access token asked for, exactly one target, and the optional scope.
 */
export function exchangeTarget(g: GrantContext): { audience: string; requestedScopes: string[] | null } {
  if (param(g, 'actor_token') !== null) throw oauthError.invalidRequest('actor_token is not supported');
  const tokenType = param(g, 'requested_token_type');
  if (tokenType !== null && tokenType !== ACCESS_TOKEN_TYPE) {
    throw oauthError.invalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  }
  const resources = [...g.form.getAll('resource'), ...g.form.getAll('audience')].filter((v) => v !== '');
  if (resources.length !== 1) throw oauthError.invalidTarget('name exactly one resource');
  return { audience: resources[0] as string, requestedScopes: scopeParam(g) };
}

/** At most one resource per token request: our access tokens carry one audience. */
export function resourceParam(g: GrantContext): string | null {
  const values = g.form.getAll('resource');
  if (values.length > 1) throw oauthError.invalidTarget('name one resource per token request');
  const v = values[0];
  if (v === undefined || v === '') return null;
  if (!URL.canParse(v) || v.includes('#')) throw oauthError.invalidTarget('resource must be an absolute URI');
  return v;
}

/** The `cnf` of what this request issues: the DPoP key, when the request carried a proof. */
export const dpopConfirmation = (g: GrantContext): Confirmation | null =>
  g.dpopJkt ? { jkt: g.dpopJkt } : null;

/** The SHA-256 thumbprint of the request's client certificate (RFC 8705 section 3.1), or null. */
export const certificateThumbprint = (g: GrantContext): string | null => {
  const c = g.settings.confirmation;
  return c && 'x5t#S256' in c ? c['x5t#S256'] : null;
};

export const tokenSettings = (app: OAuthDeps): IssuerSettings => ({
  publicOrigin: app.config.server.publicOrigin,
  maxAccessTokenTtlMs: app.config.tokens.maxAccessTokenTtlMs,
  idTokenTtlMs: app.config.tokens.idTokenTtlMs,
});

/** The RFC 6749 section 5.1 members of an access token; `scope` only when there is one. */
export function accessTokenResponse(
  access: { token: string; expiresIn: number; claims?: { cnf?: Confirmation } },
  scopes: readonly string[],
): TokenResponse {
  const response: TokenResponse = {
    access_token: access.token,
    // RFC 9449 section 5: a key-bound token is of type DPoP.
    token_type: access.claims?.cnf && 'jkt' in access.claims.cnf ? 'DPoP' : 'Bearer',
    expires_in: access.expiresIn,
  };
  if (scopes.length > 0) response.scope = scopes.join(' ');
  return response;
}

export interface PrincipalRow {
  id: string;
  state: string;
  /** The audience of the client's only service-principal grant, when it has exactly one. */
  sole_audience: string | null;
}

export interface KeyRow {
  kid: string;
  algorithm: string;
  /** null when the process already holds this kid unsealed (KeyStore.unsealedKids). */
  private_key_sealed: string | null;
}

/** What the one statement read, for the grant to use without asking again. */
export interface ServicePrefetch {
  principal: PrincipalRow | null;
  /** Null when the request named no resource (the sole grant decides, with one more query). */
  resource: { found: ResourceDefinition | null; grant: ResourceGrant | null } | null;
  key: KeyRow | null;
}
