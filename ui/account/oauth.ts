// The account page as a public OAuth client of its realm (client_id `account`): authorization
// code flow with PKCE (RFC 7636, S256) in the browser. Tokens stay in memory; the pending
// request's state, nonce and verifier stay in sessionStorage only across the redirect.

export const CLIENT_ID = 'account';
const PENDING = 'proudauth.account.pending';

export interface Tokens {
  /** For UserInfo (its built-in audience). */
  userinfo: string;
  /** For the account API (/me). */
  account: string;
  idClaims: Record<string, unknown>;
}

interface Pending {
  realm: string;
  state: string;
  nonce: string;
  verifier: string;
}

export class OAuthFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const random = () => b64url(crypto.getRandomValues(new Uint8Array(32)));

export const redirectUri = () => `${location.origin}${location.pathname}`;
const issuer = (realm: string) => `${location.origin}/realms/${encodeURIComponent(realm)}`;
const accountAudience = (realm: string) => `${location.origin}/api/v1/realms/${encodeURIComponent(realm)}/me`;
const userinfoAudience = (realm: string) => `${issuer(realm)}/oauth/userinfo`;

/** Sends the browser to the authorization endpoint (and from there to the login UI). */
/** Sends the browser to the authorization endpoint; `prompt: create` asks for a registration. */
export async function signIn(realm: string, uiLocales: string, prompt?: string): Promise<void> {
  const pending: Pending = { realm, state: random(), nonce: random(), verifier: random() };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier));
  const url = new URL(`${issuer(realm)}/oauth/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT_ID,
    redirect_uri: redirectUri(),
    scope: 'openid profile email',
    resource: accountAudience(realm),
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: b64url(new Uint8Array(digest)),
    code_challenge_method: 'S256',
    ui_locales: uiLocales,
    ...(prompt ? { prompt } : {}),
  }).toString();
  location.assign(url.toString());
}

async function tokenRequest(realm: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(`${issuer(realm)}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...form }),
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) throw new OAuthFailure(typeof body.error === 'string' ? body.error : `http_${res.status}`);
  return body;
}

function claimsOf(idToken: string): Record<string, unknown> {
  const payload = idToken.split('.')[1] ?? '';
  const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
}

/**
 * Finishes the redirect back: checks state, exchanges the code (for a UserInfo token and the ID
 * token, straight from the token endpoint over this origin's TLS, OIDC Core 3.1.3.7), then uses
 * the refresh token once for an account API token, since one access token has one audience.
 */
export async function finishSignIn(params: URLSearchParams): Promise<{ realm: string; tokens: Tokens }> {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  const pending = raw ? (JSON.parse(raw) as Pending) : null;
  if (!pending || params.get('state') !== pending.state) throw new OAuthFailure('invalid_state');
  const error = params.get('error');
  if (error) throw new OAuthFailure(error);
  const code = params.get('code') ?? '';
  const { realm } = pending;
  const first = await tokenRequest(realm, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri(),
    code_verifier: pending.verifier,
    resource: userinfoAudience(realm),
  });
  const idClaims = claimsOf(String(first.id_token ?? ''));
  if (idClaims.nonce !== pending.nonce || idClaims.iss !== issuer(realm) || idClaims.aud !== CLIENT_ID)
    throw new OAuthFailure('invalid_id_token');
  const second = await tokenRequest(realm, {
    grant_type: 'refresh_token',
    refresh_token: String(first.refresh_token ?? ''),
    resource: accountAudience(realm),
  });
  return {
    realm,
    tokens: { userinfo: String(first.access_token), account: String(second.access_token), idClaims },
  };
}
