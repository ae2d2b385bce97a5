// What identity-cli says to a server once signed in: the realm's metadata (issuer), the token
// endpoint (code exchange and refresh with the public identity-cli client, RFC 6749 sections 4.1.3
// and 6, resource per RFC 8707), revocation (RFC 7009) and the administration API with a bearer
// token kept fresh in the credentials store. Endpoints are addressed through the URL the operator
// gave, not the public origin, so a server reached through a tunnel or a proxy works the same.
import { decodeJwt } from 'jose';
import { CLI_CLIENT_ID } from '../../clients/builtin-clients.ts';
import { CliError, SignInEnded } from './cli-error.ts';
import { readStore, type StoredCredential, withStoreLock, writeStore } from './credentials-store.ts';

const TIMEOUT_MS = 20_000;
// A token this close to expiry could lapse on its way to the server.
const EXPIRY_MARGIN_MS = 30_000;

export const realmUrl = (server: string, realm: string): string => `${server}/realms/${realm}`;
export const apiBaseOf = (server: string, realm: string): string => `${server}/api/v1/realms/${realm}`;

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    throw new CliError(`cannot reach ${new URL(url).origin}: ${(e as Error).message}`);
  }
}

async function readBody(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function postForm(url: string, form: Record<string, string>): Promise<Answer> {
  const res = await send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: await readBody(res) };
}

const oauthReason = (a: Answer): string =>
  [a.body.error ?? a.body.code ?? `HTTP ${a.status}`, a.body.error_description ?? a.body.detail]
    .filter(Boolean)
    .join(': ');

export interface RealmInfo {
  issuer: string;
  /** The admin API's audience, which the tokens are requested for. */
  audience: string;
}

/** The realm's issuer from its metadata, and from it the admin audience (origin + realm). */
export async function discoverRealm(server: string, realm: string): Promise<RealmInfo> {
  const res = await send(`${realmUrl(server, realm)}/.well-known/openid-configuration`, {
    headers: { accept: 'application/json' },
  });
  if (res.status === 404) throw new CliError(`${server} has no realm ${realm}`);
  const body = await readBody(res);
  const issuer = body.issuer;
  const suffix = `/realms/${realm}`;
  if (res.status !== 200 || typeof issuer !== 'string' || !issuer.endsWith(suffix)) {
    throw new CliError(`${server} answered no usable metadata for realm ${realm} (HTTP ${res.status})`);
  }
  return { issuer, audience: apiBaseOf(issuer.slice(0, -suffix.length), realm) };
}

export interface TokenSet {
  accessToken: string;
  expiresAt: Date;
  refreshToken: string | null;
  subject: string;
}

function tokenSet(a: Answer, now: Date): TokenSet {
  const { access_token: access, expires_in: expiresIn, refresh_token: refresh } = a.body;
  if (typeof access !== 'string' || typeof expiresIn !== 'number') {
    throw new CliError('the token endpoint answered without an access token');
  }
  let subject = '';
  try {
    // Only read for display: the token came straight from the token endpoint over this request.
    subject = String(decodeJwt(access).sub ?? '');
  } catch {
    // an opaque token: the subject stays unknown
  }
  return {
    accessToken: access,
    expiresAt: new Date(now.getTime() + expiresIn * 1000),
    refreshToken: typeof refresh === 'string' ? refresh : null,
    subject,
  };
}

export interface CodeExchange {
  server: string;
  realm: string;
  code: string;
  redirectUri: string;
  verifier: string;
  audience: string;
}

export async function exchangeCode(x: CodeExchange, now: Date): Promise<TokenSet> {
  const a = await postForm(`${realmUrl(x.server, x.realm)}/oauth/token`, {
    grant_type: 'authorization_code',
    client_id: CLI_CLIENT_ID,
    code: x.code,
    redirect_uri: x.redirectUri,
    code_verifier: x.verifier,
    resource: x.audience,
  });
  if (a.status !== 200) throw new CliError(`the code exchange failed: ${oauthReason(a)}`);
  return tokenSet(a, now);
}

const loginAgain = (c: StoredCredential, why: string) =>
  new SignInEnded(`${why}: run identity-cli login --realm ${c.realm} --server ${c.server}`);

async function refresh(c: StoredCredential, now: Date): Promise<StoredCredential> {
  if (!c.refreshToken) throw loginAgain(c, `the sign-in to realm ${c.realm} has expired`);
  const a = await postForm(`${realmUrl(c.server, c.realm)}/oauth/token`, {
    grant_type: 'refresh_token',
    client_id: CLI_CLIENT_ID,
    refresh_token: c.refreshToken,
    resource: c.audience,
  });
  if (a.status === 400 && a.body.error === 'invalid_grant') {
    throw loginAgain(c, `the sign-in to realm ${c.realm} has ended (${oauthReason(a)})`);
  }
  if (a.status !== 200) throw new CliError(`refreshing the access token failed: ${oauthReason(a)}`);
  const t = tokenSet(a, now);
  // Without a new refresh token the old one was not rotated and stays usable.
  return {
    ...c,
    accessToken: t.accessToken,
    expiresAt: t.expiresAt,
    refreshToken: t.refreshToken ?? c.refreshToken,
    updatedAt: now,
  };
}

const fresh = (c: StoredCredential, now: Date) => c.expiresAt.getTime() - EXPIRY_MARGIN_MS > now.getTime();

/**
 * A credential whose access token is usable now, refreshed (and the rotated refresh token stored)
 * when needed. `rejected` is an access token the server refused: it is replaced even if unexpired.
 */
export async function usableCredential(
  path: string,
  c: StoredCredential,
  now: Date,
  rejected?: string,
): Promise<StoredCredential> {
  if (rejected === undefined && fresh(c, now)) return c;
  return withStoreLock(path, async () => {
    // Another command may have refreshed while this one waited for the lock.
    const store = readStore(path);
    const current = store.get(c.issuer);
    if (!current) throw loginAgain(c, `not logged in to realm ${c.realm} any more`);
    if (current.accessToken !== rejected && fresh(current, now)) return current;
    const next = await refresh(current, now);
    store.set(next.issuer, next);
    writeStore(path, store);
    return next;
  });
}

/** Path must stay under the realm's API base, so the token is never sent anywhere else. */
export function apiUrl(apiBase: string, path: string): URL {
  if (!path.startsWith('/'))
    throw new CliError(`the path ${path} must start with / (relative to ${apiBase})`);
  const base = new URL(apiBase);
  const url = new URL(`${apiBase}${path}`);
  if (
    url.origin !== base.origin ||
    (url.pathname !== base.pathname && !url.pathname.startsWith(`${base.pathname}/`))
  ) {
    throw new CliError(`the path ${path} leaves ${apiBase}`);
  }
  return url;
}

export interface ApiRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | null;
}

export const callApi = (c: StoredCredential, r: ApiRequest): Promise<Response> =>
  send(r.url.toString(), {
    method: r.method,
    headers: {
      accept: 'application/json',
      ...(r.body !== null ? { 'content-type': 'application/json' } : {}),
      ...r.headers,
      authorization: `Bearer ${c.accessToken}`,
    },
    ...(r.body !== null ? { body: r.body } : {}),
  });

export type Revocation = 'revoked' | 'unsupported';

/** RFC 7009 as a public client; a server without the endpoint (404) is reported, not an error. */
export async function revokeToken(
  c: StoredCredential,
  token: string,
  hint: 'refresh_token' | 'access_token',
): Promise<Revocation> {
  const a = await postForm(`${realmUrl(c.server, c.realm)}/oauth/revoke`, {
    client_id: CLI_CLIENT_ID,
    token,
    token_type_hint: hint,
  });
  if (a.status === 200) return 'revoked';
  if (a.status === 404) return 'unsupported';
  throw new CliError(`revoking the ${hint.replace('_', ' ')} failed: ${oauthReason(a)}`);
}

/** RFC 8628 section 3.2, as identity-cli login --device shows it. */
export interface DeviceCodes {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string | null;
  expiresIn: number;
  interval: number;
}

export async function requestDeviceCodes(
  server: string,
  realm: string,
  audience: string,
): Promise<DeviceCodes> {
  const a = await postForm(`${realmUrl(server, realm)}/oauth/device_authorization`, {
    client_id: CLI_CLIENT_ID,
    scope: 'openid',
    resource: audience,
  });
  const b = a.body;
  if (
    a.status !== 200 ||
    typeof b.device_code !== 'string' ||
    typeof b.user_code !== 'string' ||
    typeof b.verification_uri !== 'string'
  )
    throw new CliError(`the device authorization failed: ${oauthReason(a)}`);
  return {
    deviceCode: b.device_code,
    userCode: b.user_code,
    verificationUri: b.verification_uri,
    verificationUriComplete:
      typeof b.verification_uri_complete === 'string' ? b.verification_uri_complete : null,
    expiresIn: typeof b.expires_in === 'number' ? b.expires_in : 600,
    interval: typeof b.interval === 'number' ? b.interval : 5,
  };
}

/** One poll of the token endpoint: the tokens, or the RFC 8628 section 3.5 error to act on. */
export async function pollDeviceToken(
  server: string,
  realm: string,
  deviceCode: string,
  audience: string,
  now: Date,
): Promise<{ tokens: TokenSet } | { waiting: 'authorization_pending' | 'slow_down' }> {
  const a = await postForm(`${realmUrl(server, realm)}/oauth/token`, {
    grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    client_id: CLI_CLIENT_ID,
    device_code: deviceCode,
    resource: audience,
  });
  if (a.status === 200) return { tokens: tokenSet(a, now) };
  if (a.body.error === 'authorization_pending' || a.body.error === 'slow_down')
    return { waiting: a.body.error };
  if (a.body.error === 'access_denied') throw new CliError('the sign-in was refused on the other device');
  if (a.body.error === 'expired_token')
    throw new CliError('the code expired before anyone signed in; run login again');
  throw new CliError(`the device sign-in failed: ${oauthReason(a)}`);
}
