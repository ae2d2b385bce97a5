// The SCIM 2.0 client of a provisioning target (RFC 7644): every request goes through the one
// outbound client with the target's egress guard (the webhook destination rules: docs/webhooks.md)
// and the residency list, carries the target's bearer credential, and reads at most one SCIM body
// (1 MiB). A failure that says nothing about the resource (no answer, 429, 5xx) is thrown as
// PeerUnavailable; every other answer is returned for the caller to judge.
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import { OutboundFailure, type OutboundHttp } from '../platform/net/outbound-http.ts';
import { type DeliveryPolicy, guardFor, residencyProblem } from '../webhooks/index.ts';

export const PEER_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1_048_576;
/** The SCIM page size of document 2, Limits (SCIM). */
export const PAGE_SIZE = 200;
const USER_AGENT = 'ProudAuth-Provisioning/1';

export interface PeerDeps {
  outbound: OutboundHttp;
  keyring: RootKeyring;
  policy: DeliveryPolicy;
  /** Deadline of one request to a target; PEER_TIMEOUT_MS unless set. */
  peerTimeoutMs?: number;
}

export interface PeerTarget {
  realm_id: string;
  id: string;
  base_url: string;
  credential_sealed: string;
  allow_private_network: boolean;
}

export type Json = Record<string, unknown>;

export interface PeerAnswer {
  status: number;
  body: Json | null;
}

/** The target could not be asked (egress refusal, timeout, network, 429, 5xx): try again later. */
export class PeerUnavailable extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(`the SCIM target is unavailable: ${reason}`);
    this.name = 'PeerUnavailable';
    this.reason = reason;
  }
}

/** The row binding of a sealed credential: one moved to another target does not open. */
export const credentialAad = (realmId: string, id: string) => `provisioning/${realmId}/${id}`;

export const sealCredential = (keyring: RootKeyring, realmId: string, id: string, token: string) =>
  keyring.encrypt('provisioning-credential', token, credentialAad(realmId, id));

function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}

export async function callPeer(
  deps: PeerDeps,
  target: PeerTarget,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: Json,
): Promise<PeerAnswer> {
  if (residencyProblem(target.base_url, deps.policy)) throw new PeerUnavailable('egress_denied');
  const token = deps.keyring
    .decrypt('provisioning-credential', target.credential_sealed, credentialAad(target.realm_id, target.id))
    .toString('utf8');
  let res: Response;
  try {
    res = await deps.outbound.fetch({
      url: joinUrl(target.base_url, path),
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/scim+json',
        'user-agent': USER_AGENT,
        ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
      },
      body: body === undefined ? null : JSON.stringify(body),
      guard: guardFor(deps.policy, target.allow_private_network),
      timeoutMs: deps.peerTimeoutMs ?? PEER_TIMEOUT_MS,
      maxResponseBytes: MAX_BODY_BYTES,
    });
  } catch (e) {
    if (e instanceof OutboundFailure) throw new PeerUnavailable(e.kind);
    throw e;
  }
  if (res.status === 429 || res.status >= 500) throw new PeerUnavailable(`http_${res.status}`);
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  const json = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Json) : null;
  return { status: res.status, body: json };
}

/** RFC 7644 §3.4.2.4: pages of PAGE_SIZE from startIndex 1 until the total is read, at most `max`. */
export async function listAll(
  deps: PeerDeps,
  target: PeerTarget,
  resource: 'Users' | 'Groups',
  max: number,
): Promise<Json[]> {
  const out: Json[] = [];
  for (let start = 1; out.length < max; ) {
    const answer = await callPeer(deps, target, 'GET', `/${resource}?startIndex=${start}&count=${PAGE_SIZE}`);
    if (answer.status !== 200 || !answer.body) throw new PeerUnavailable(`list_${answer.status}`);
    const page = Array.isArray(answer.body.Resources) ? (answer.body.Resources as unknown[]) : [];
    for (const r of page) if (r && typeof r === 'object' && !Array.isArray(r)) out.push(r as Json);
    const total = typeof answer.body.totalResults === 'number' ? answer.body.totalResults : 0;
    start += page.length;
    if (page.length === 0 || start > total) break;
  }
  return out.slice(0, max);
}

/** The remote id of a resource the target already holds under this attribute value (RFC 7644 §3.4.2.2). */
export async function findRemoteId(
  deps: PeerDeps,
  target: PeerTarget,
  resource: 'Users' | 'Groups',
  attribute: 'userName' | 'displayName',
  value: string,
): Promise<string | null> {
  const filter = encodeURIComponent(`${attribute} eq ${JSON.stringify(value)}`);
  const answer = await callPeer(deps, target, 'GET', `/${resource}?filter=${filter}&count=1`);
  if (answer.status !== 200 || !answer.body) return null;
  const first = Array.isArray(answer.body.Resources)
    ? (answer.body.Resources[0] as Json | undefined)
    : undefined;
  return typeof first?.id === 'string' ? first.id : null;
}
