// One administration API request with a stored sign-in (docs/cli.md): the token refreshed first
// when it has expired, and once more if the server refuses it (401) as it stands. Shared by the
// commands that change a realm over the API (api, realm set-login-ui / set-policy, config).
import { type ApiRequest, apiUrl, callApi, usableCredential } from './api-client.ts';
import { cliIo } from './cli-io.ts';
import { credentialsPath, readStore, type StoredCredential, selectCredential } from './credentials-store.ts';

export interface SignInTarget {
  realm?: string | undefined;
  server?: string | undefined;
  credentials?: string | undefined;
}

export interface StoredSignIn {
  file: string;
  credential: StoredCredential;
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** The stored sign-in of the realm (and server, when given), or null when there is none. */
export function findSignIn(t: SignInTarget & { realm: string }): StoredSignIn | null {
  const file = credentialsPath(t.credentials, cliIo().env);
  const server = t.server ? trimSlash(t.server) : undefined;
  const matches = [...readStore(file).values()].filter(
    (c) =>
      c.realm === t.realm && (!server || c.server === server || c.issuer === `${server}/realms/${c.realm}`),
  );
  // Several sign-ins for one realm name (different servers): the usual error names them.
  if (matches.length > 1) selectCredential(readStore(file), { realm: t.realm, server });
  const credential = matches[0];
  return credential ? { file, credential } : null;
}

/** The stored sign-in the flags name; the error says to log in when there is none. */
export function requireSignIn(t: SignInTarget): StoredSignIn {
  const file = credentialsPath(t.credentials, cliIo().env);
  return { file, credential: selectCredential(readStore(file), { realm: t.realm, server: t.server }) };
}

export interface AdminAnswer {
  status: number;
  ok: boolean;
  response: Response;
  credential: StoredCredential;
}

export async function adminRequest(
  s: StoredSignIn,
  r: { method: string; path: string; headers?: Record<string, string>; body: string | null },
): Promise<AdminAnswer> {
  const request: ApiRequest = {
    method: r.method,
    url: apiUrl(s.credential.apiBase, r.path),
    headers: r.headers ?? {},
    body: r.body,
  };
  let credential = await usableCredential(s.file, s.credential, new Date());
  let res = await callApi(credential, request);
  // Revoked or rejected before its time (another host's clock, a key rotation): refresh once.
  // A 401 comes before the request is acted on, so sending it again is safe.
  if (res.status === 401 && credential.refreshToken) {
    await res.body?.cancel();
    credential = await usableCredential(s.file, credential, new Date(), credential.accessToken);
    res = await callApi(credential, request);
  }
  return { status: res.status, ok: res.ok, response: res, credential };
}

/** The response body: parsed JSON, else the text; undefined when empty. */
export async function responseBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function problemSummary(status: number, body: unknown): string {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const parts = [b.code ?? b.error ?? b.title, b.detail ?? b.error_description].filter(Boolean);
  return `HTTP ${status}${parts.length > 0 ? ` ${parts.join(': ')}` : ''}`;
}
