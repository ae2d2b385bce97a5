// How federation talks to an upstream provider over HTTP: every request through the one
// egress-guarded outbound client (platform/net/outbound-http.ts), as oauth4webapi's custom fetch,
// with a short deadline and a bounded answer. Each exchange with an upstream (a discovery, a
// callback) gets its own fetch that notes whether the upstream was unreachable or failed (no
// answer, or a 5xx), so the caller can tell an outage from an answer it refuses.
import * as oauth from 'oauth4webapi';
import type { Environment } from '../platform/config/settings.ts';
import { EgressGuard } from '../platform/net/egress-guard.ts';
import { OutboundFailure, type OutboundHttp } from '../platform/net/outbound-http.ts';

/** Each upstream request gives up after this long, so a slow provider holds no request slot for long. */
export const UPSTREAM_TIMEOUT_MS = 5000;
/** Discovery documents, key sets, token answers and profiles are small. */
const MAX_ANSWER_BYTES = 256 * 1024;

export interface EgressSettings {
  environment: Environment;
  /** delivery.egress_allowlist: CIDRs outbound calls may reach even when private. */
  egressAllowlist: readonly string[];
  /** delivery.allow_private_webhooks, honoured outside production only. */
  allowPrivate: boolean;
}

/** The guard upstream calls pass: the operator's allowlist, and private networks only in development. */
export const upstreamGuard = (e: EgressSettings): EgressGuard =>
  new EgressGuard({
    allowlist: [...e.egressAllowlist],
    allowPrivate: e.allowPrivate && e.environment !== 'production',
  });

export interface Exchange {
  /** The options every oauth4webapi call of this exchange takes. */
  options: { [oauth.customFetch]: typeof fetch; [oauth.allowInsecureRequests]: boolean };
  /** The upstream could not be reached or answered 5xx during this exchange. */
  readonly outage: boolean;
  /** GET of a URL as JSON through the same fetch (profiles, email lists); null when not 2xx JSON. */
  getJson(url: string, headers: Record<string, string>): Promise<unknown>;
  /** GET of a URL as text up to maxBytes (SAML metadata); null when not 2xx or larger. */
  fetchText(url: string, maxBytes: number): Promise<string | null>;
}

function bodyText(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('unsupported request body for an upstream call');
}

function headerRecord(h: unknown): Record<string, string> {
  if (h instanceof Headers) return Object.fromEntries(h.entries());
  if (Array.isArray(h)) return Object.fromEntries(h as [string, string][]);
  return { ...((h as Record<string, string> | undefined) ?? {}) };
}

export function newExchange(outbound: OutboundHttp, egress: EgressSettings): Exchange {
  const guard = upstreamGuard(egress);
  let outage = false;
  const doFetch = async (
    url: string,
    init: RequestInit = {},
    maxResponseBytes = MAX_ANSWER_BYTES,
  ): Promise<Response> => {
    try {
      const res = await outbound.fetch({
        url,
        method: init.method ?? 'GET',
        headers: { 'user-agent': 'ProudAuth', ...headerRecord(init.headers) },
        body: bodyText(init.body),
        guard,
        timeoutMs: UPSTREAM_TIMEOUT_MS,
        maxResponseBytes,
        ...(init.signal ? { signal: init.signal } : {}),
      });
      if (res.status >= 500) outage = true;
      return res;
    } catch (e) {
      if (e instanceof OutboundFailure) outage = true;
      throw e;
    }
  };
  return {
    options: {
      [oauth.customFetch]: ((url: string, init: RequestInit) => doFetch(url, init)) as typeof fetch,
      // http reaches a provider only outside production (the connection rules refuse it there).
      [oauth.allowInsecureRequests]: egress.environment !== 'production',
    },
    get outage() {
      return outage;
    },
    async fetchText(url, maxBytes) {
      const res = await doFetch(
        url,
        { headers: { accept: 'application/samlmetadata+xml, application/xml' } },
        maxBytes,
      );
      if (res.status < 200 || res.status > 299) return null;
      return res.text();
    },
    async getJson(url, headers) {
      const res = await doFetch(url, { headers: { accept: 'application/json', ...headers } });
      if (res.status < 200 || res.status > 299) return null;
      try {
        return (await res.json()) as unknown;
      } catch {
        return null;
      }
    },
  };
}
