// Public keys of the outside issuers workload federation rules name by URL
// (docs/workload-federation.md): fetched through the egress guard with a short deadline, kept five
// minutes per process (document 2, Limits, "Workload federation"), one fetch at a time per URL.
// Keys that are not public signature keys of an accepted kind are dropped, as a client's would be.
import type { JSONWebKeySet } from 'jose';
import { publicJwkProblem, WORKLOAD_LIMITS } from '../clients/index.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import type { Environment } from '../platform/config/settings.ts';
import { EgressGuard } from '../platform/net/egress-guard.ts';
import type { OutboundHttp } from '../platform/net/outbound-http.ts';

const FETCH_TIMEOUT_MS = 5000;
const MAX_KEY_SET_BYTES = 256 * 1024;
/** Distinct URLs kept at once; the oldest copy goes first. */
const MAX_KEPT = 500;

export interface KeySetSettings {
  environment: Environment;
  egressAllowlist: readonly string[];
  /** delivery.allow_private_webhooks, honoured outside production only (as for federation). */
  allowPrivate: boolean;
}

interface Kept {
  keys: JSONWebKeySet;
  until: number;
}

export class WorkloadKeySets {
  readonly #kept = new Map<string, Kept>();
  readonly #pending = new Map<string, Promise<JSONWebKeySet>>();
  readonly #guard: EgressGuard;
  readonly #outbound: OutboundHttp;
  readonly #now: () => number;

  constructor(outbound: OutboundHttp, settings: KeySetSettings, now: () => number) {
    this.#outbound = outbound;
    this.#now = now;
    this.#guard = new EgressGuard({
      allowlist: [...settings.egressAllowlist],
      allowPrivate: settings.allowPrivate && settings.environment !== 'production',
    });
  }

  /** The key set at `uri`; 503 temporarily_unavailable when it cannot be had. */
  async keysAt(uri: string): Promise<JSONWebKeySet> {
    const kept = this.#kept.get(uri);
    if (kept && kept.until > this.#now()) return kept.keys;
    let pending = this.#pending.get(uri);
    if (!pending) {
      pending = this.#fetch(uri).finally(() => this.#pending.delete(uri));
      this.#pending.set(uri, pending);
    }
    return pending;
  }

  async #fetch(uri: string): Promise<JSONWebKeySet> {
    const unavailable = () =>
      oauthError.temporarilyUnavailable("the workload issuer's key set could not be fetched", 30);
    let body: unknown;
    try {
      const res = await this.#outbound.fetch({
        url: uri,
        method: 'GET',
        headers: { accept: 'application/json', 'user-agent': 'ProudAuth' },
        guard: this.#guard,
        timeoutMs: FETCH_TIMEOUT_MS,
        maxResponseBytes: MAX_KEY_SET_BYTES,
      });
      if (res.status !== 200) throw unavailable();
      body = await res.json();
    } catch {
      throw unavailable();
    }
    const raw = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(raw)) throw unavailable();
    const keys = raw.filter(
      (k): k is Record<string, unknown> =>
        typeof k === 'object' && k !== null && !Array.isArray(k) && publicJwkProblem(k) === null,
    );
    const set = { keys } as JSONWebKeySet;
    if (this.#kept.size >= MAX_KEPT) {
      const oldest = this.#kept.keys().next().value;
      if (oldest !== undefined) this.#kept.delete(oldest);
    }
    this.#kept.delete(uri);
    this.#kept.set(uri, { keys: set, until: this.#now() + WORKLOAD_LIMITS.keySetCacheMs });
    return set;
  }
}
