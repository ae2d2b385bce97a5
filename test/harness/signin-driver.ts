// Drives sign-in transactions through the real HTTP API, headless or as a browser would.
import { randomBytes } from 'node:crypto';
import { s256Challenge } from '../../src/kernel/pkce.ts';
import type { Harness } from './harness.ts';

export interface JsonResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary members of response bodies
  body: any;
}

export async function json(res: Response): Promise<JsonResponse> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

export const newVerifier = () => randomBytes(32).toString('base64url');

export interface HeadlessTx {
  id: string;
  token: string;
  verifier: string;
  start: JsonResponse;
  step(path: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse>;
  get(headers?: Record<string, string>): Promise<JsonResponse>;
}

export function startBody(
  clientId: string,
  redirectUri: string,
  verifier: string,
  extra: Record<string, unknown> = {},
) {
  return {
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: s256Challenge(verifier),
    code_challenge_method: 'S256',
    scope: 'openid',
    state: 'st-123',
    nonce: 'n-456',
    ...extra,
  };
}

export async function startHeadless(
  h: Harness,
  realm: string,
  clientId: string,
  redirectUri: string,
  extra: Record<string, unknown> = {},
  /** Request headers of the start, e.g. a user-agent. */
  startHeaders: Record<string, string> = {},
): Promise<HeadlessTx> {
  const verifier = newVerifier();
  const start = await json(
    await h.get(`/api/v1/realms/${realm}/auth/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...startHeaders },
      body: JSON.stringify(startBody(clientId, redirectUri, verifier, extra)),
    }),
  );
  if (start.status !== 201) throw new Error(`start failed: ${start.status} ${JSON.stringify(start.body)}`);
  const id: string = start.body.transaction_id;
  const token: string = start.body.continuation_token;
  const base = `/api/v1/realms/${realm}/auth/transactions/${id}`;
  return {
    id,
    token,
    verifier,
    start,
    step: async (path, body = {}, headers = {}) =>
      json(
        await h.get(`${base}/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-transaction-token': token, ...headers },
          body: JSON.stringify(body),
        }),
      ),
    get: async (headers = { 'x-transaction-token': token }) => json(await h.get(base, { headers })),
  };
}
