// The account page as a public OAuth client of its realm (client_id `account`): authorization
// code flow with PKCE (RFC 7636, S256) in the browser. Tokens stay in memory; the pending
// request's state, nonce and verifier wait in localStorage, keyed by its state, until the redirect
// comes back: in any tab of this browser, since a magic link from a mail client opens a new tab
// (docs/decisions.md). Each is removed when used and dropped after PENDING_MAX_AGE_MS.

export const CLIENT_ID = 'account';
const PENDING_PREFIX = 'proudauth.account.pending.';
/** Longer than any sign-in transaction lives; a request older than this is never finished. */
const PENDING_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export interface Tokens {
  /** For UserInfo (its built-in audience). */
  userinfo: string;
  /** For the account API (/me). */
  account: string;
  /** The ID token as issued: the hint of the sign-out (RP-Initiated Logout 1.0). */
  idToken: string;
  idClaims: Record<string, unknown>;
}

interface Pending {
  realm: string;
  state: string;
  nonce: string;
  verifier: string;
  /** The language the sign-in was asked in, kept for the page that comes back. */
  locale: string;
  createdAt: number;
}

/** Drops the requests that were never finished and are too old to be. */
function dropStalePending(now: number): void {
  for (let i = localStorage.length - 1; i >= 0; i--) {
    const key = localStorage.key(i);
    if (!key?.startsWith(PENDING_PREFIX)) continue;
    try {
      const p = JSON.parse(localStorage.getItem(key) ?? '') as Partial<Pending>;
      if (typeof p.createdAt === 'number' && now - p.createdAt < PENDING_MAX_AGE_MS) continue;
    } catch {
      // unreadable: dropped below
    }
    localStorage.removeItem(key);
  }
}

/** Takes (reads and removes) the pending request a returning state names. */
function takePending(state: string | null): Pending | null {
  if (!state) return null;
  const key = PENDING_PREFIX + state;
  const raw = localStorage.getItem(key);
  localStorage.removeItem(key);
  if (!raw) return null;
  try {
    const p = JSON.parse(raw) as Pending;
    return p.state === state && Date.now() - p.createdAt < PENDING_MAX_AGE_MS ? p : null;
  } catch {
    return null;
  }
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

/**
 * Sends the browser to the authorization endpoint. `extra` adds request parameters: `prompt:
 * create` asks for a registration, `prompt: login` with `max_age: 0` a fresh sign-in.
 */
export async function signIn(
  realm: string,
  uiLocales: string,
  extra: Record<string, string> = {},
): Promise<void> {
  const now = Date.now();
  dropStalePending(now);
  const pending: Pending = {
    realm,
    state: random(),
    nonce: random(),
    verifier: random(),
    locale: uiLocales,
    createdAt: now,
  };
  localStorage.setItem(PENDING_PREFIX + pending.state, JSON.stringify(pending));
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
    ...extra,
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
export async function finishSignIn(
  params: URLSearchParams,
): Promise<{ realm: string; locale: string; tokens: Tokens }> {
  const pending = takePending(params.get('state'));
  if (!pending) throw new OAuthFailure('invalid_state');
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
  const idToken = String(first.id_token ?? '');
  const idClaims = claimsOf(idToken);
  if (idClaims.nonce !== pending.nonce || idClaims.iss !== issuer(realm) || idClaims.aud !== CLIENT_ID)
    throw new OAuthFailure('invalid_id_token');
  const second = await tokenRequest(realm, {
    grant_type: 'refresh_token',
    refresh_token: String(first.refresh_token ?? ''),
    resource: accountAudience(realm),
  });
  return {
    realm,
    locale: pending.locale,
    tokens: {
      userinfo: String(first.access_token),
      account: String(second.access_token),
      idToken,
      idClaims,
    },
  };
}

/**
 * Signs out (RP-Initiated Logout 1.0, POST form): ends this browser's session at the realm, the
 * one its cookie names and the one the ID token names. No post-logout redirect: the page stays.
 */
export async function signOut(realm: string, idToken: string): Promise<void> {
  const res = await fetch(`${issuer(realm)}/oauth/logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ id_token_hint: idToken, client_id: CLIENT_ID }),
  });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { error?: string; code?: string };
    throw new OAuthFailure(body.code ?? body.error ?? `http_${res.status}`);
  }
}
