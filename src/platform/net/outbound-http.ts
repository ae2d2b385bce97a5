// The one outbound HTTP client for deliveries (webhooks, and any other channel that posts to an
// address a tenant chose). The egress guard is applied three times, because a name checked once
// can resolve elsewhere a moment later (rebinding, round-robin answers, short TTLs):
//   1. the host name's resolution is filtered (refused addresses are never dialled);
//   2. an IP-literal host is checked before the socket opens (literals skip resolution);
//   3. the connected socket's remoteAddress is checked at every new connection, before any byte
//      of the request is written.
// Redirects are never followed (a 3xx is an answer like any other), each call has an overall
// deadline, and at most `maxResponseBytes` of the answer are read and discarded.

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { inSpan } from '../tracing.ts';
import { EgressGuard } from './egress-guard.ts';

const OPEN_FOR_TESTS = new EgressGuard({ allowlist: ['0.0.0.0/0', '::/0'], allowPrivate: true });

/** A resolver in the shape of `dns.lookup` with `{ all: true }`; tests pass a fixed table. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses),
    );
  });

export class EgressDeniedError extends Error {
  readonly code = 'EGRESS_DENIED';
  readonly address: string;
  readonly reason: string;
  constructor(address: string, reason: string) {
    super(`egress denied: ${reason}`);
    this.name = 'EgressDeniedError';
    this.address = address;
    this.reason = reason;
  }
}

export interface OutboundPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  guard: EgressGuard;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Keep what was read of the answer (at most maxResponseBytes) for a caller that reads it. */
  keepBody?: boolean;
}

/** A request of a protocol library (a Fetch-shaped call): any method, headers and a small body. */
export interface OutboundFetch {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string | null;
  guard: EgressGuard;
  timeoutMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal;
}

/** Why a fetch got no answer: the caller tells an unreachable upstream from a bad answer by it. */
export class OutboundFailure extends Error {
  readonly kind: 'egress_denied' | 'timeout' | 'network_error' | 'too_large';
  constructor(kind: OutboundFailure['kind'], detail: string) {
    super(`outbound request failed: ${kind} (${detail})`);
    this.name = 'OutboundFailure';
    this.kind = kind;
  }
}

export type OutboundResult =
  | { kind: 'response'; status: number; bytesRead: number; body?: Buffer }
  | { kind: 'egress_denied'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'network_error'; code: string };

export interface OutboundHttpOptions {
  resolver?: Resolver;
  /** Trusted CA certificates for TLS (tests); the system store otherwise. */
  ca?: string | Buffer;
  /**
   * Tests turn the resolution filter off to prove the connection check holds on its own; it is
   * always on in the service.
   */
  filterResolution?: boolean;
}

function guardedLookup(resolver: Resolver, guard: EgressGuard): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (all) => {
        const verdicts = all.map((a) => ({ a, v: guard.check(a.address) }));
        const allowed = verdicts.filter((x) => x.v.allowed).map((x) => x.a);
        const first = verdicts[0];
        if (allowed.length === 0) {
          const reason = first && !first.v.allowed ? first.v.reason : 'no_address';
          callback(new EgressDeniedError(first?.a.address ?? hostname, reason), '', 0);
          return;
        }
        if (options.all) {
          (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
        } else {
          const pick = allowed[0]!;
          callback(null, pick.address, pick.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** Holds one connection pool per egress policy; close it when the process stops. */
export class OutboundHttp {
  readonly #resolver: Resolver;
  readonly #ca: string | Buffer | undefined;
  readonly #filterResolution: boolean;
  readonly #agents = new Map<string, Agent>();

  constructor(options: OutboundHttpOptions = {}) {
    this.#resolver = options.resolver ?? systemResolver;
    this.#ca = options.ca;
    this.#filterResolution = options.filterResolution ?? true;
  }

  #agentFor(guard: EgressGuard): Agent {
    let agent = this.#agents.get(guard.key);
    if (agent) return agent;
    const connector = buildConnector({
      lookup: guardedLookup(this.#resolver, this.#filterResolution ? guard : OPEN_FOR_TESTS),
      timeout: 10_000,
      ...(this.#ca ? { ca: this.#ca } : {}),
    });
    agent = new Agent({
      connect(opts, callback) {
        const host = opts.hostname.replace(/^\[|\]$/g, '');
        if (isIP(host)) {
          const v = guard.check(host);
          if (!v.allowed) {
            callback(new EgressDeniedError(host, v.reason), null);
            return;
          }
        }
        connector(opts, (err, socket) => {
          if (err || !socket) {
            callback(err ?? new Error('connection failed'), null);
            return;
          }
          const remote = socket.remoteAddress ?? '';
          const v = guard.check(remote);
          if (!v.allowed) {
            socket.destroy();
            callback(new EgressDeniedError(remote, v.reason), null);
            return;
          }
          callback(null, socket);
        });
      },
      // Connections are reused only briefly; every new one is checked again.
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 10_000,
      pipelining: 1,
    });
    this.#agents.set(guard.key, agent);
    return agent;
  }

  /** A POST whose answer is read up to maxResponseBytes; failures are results, never throws. */
  post(req: OutboundPost): Promise<OutboundResult> {
    return inSpan('http POST', 'client', outboundAttributes('POST', req.url), () => this.#post(req));
  }

  async #post(req: OutboundPost): Promise<OutboundResult> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), req.timeoutMs);
    try {
      const res = await request(req.url, {
        dispatcher: this.#agentFor(req.guard),
        method: 'POST',
        headers: req.headers,
        body: req.body,
        signal: controller.signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      let bytesRead = 0;
      const kept: Buffer[] = [];
      try {
        for await (const chunk of res.body) {
          const room = req.maxResponseBytes - bytesRead;
          const piece =
            (chunk as Buffer).length > room ? (chunk as Buffer).subarray(0, room) : (chunk as Buffer);
          bytesRead += piece.length;
          if (req.keepBody) kept.push(piece);
          if (bytesRead >= req.maxResponseBytes) break;
        }
      } catch {
        // A body cut short or too slow does not change the status the receiver already sent.
      } finally {
        if (!res.body.destroyed) res.body.destroy();
      }
      return {
        kind: 'response',
        status: res.statusCode,
        bytesRead,
        ...(req.keepBody ? { body: Buffer.concat(kept) } : {}),
      };
    } catch (err) {
      return classifyFailure(err, controller.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The answer as a Fetch `Response`, for protocol libraries that take a custom fetch (the
   * OpenID Connect client of federation). Redirects are answers, never followed; an answer larger
   * than `maxResponseBytes` fails rather than being cut, since a cut JSON document is no document.
   */
  fetch(req: OutboundFetch): Promise<Response> {
    const method = req.method.toUpperCase();
    return inSpan(`http ${method}`, 'client', outboundAttributes(method, req.url), () => this.#fetch(req));
  }

  async #fetch(req: OutboundFetch): Promise<Response> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), req.timeoutMs);
    const abort = () => controller.abort();
    req.signal?.addEventListener('abort', abort, { once: true });
    try {
      const res = await request(req.url, {
        dispatcher: this.#agentFor(req.guard),
        method: req.method as 'GET',
        headers: req.headers,
        body: req.body ?? null,
        signal: controller.signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > req.maxResponseBytes) {
          res.body.destroy();
          throw new OutboundFailure('too_large', `more than ${req.maxResponseBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      const nullBody = res.statusCode === 204 || res.statusCode === 304;
      return new Response(nullBody ? null : Buffer.concat(chunks), { status: res.statusCode, headers });
    } catch (err) {
      if (err instanceof OutboundFailure) throw err;
      const failure = classifyFailure(err, controller.signal.aborted);
      throw new OutboundFailure(
        failure.kind === 'response' ? 'network_error' : failure.kind,
        failure.kind === 'egress_denied'
          ? failure.reason
          : failure.kind === 'network_error'
            ? failure.code
            : '',
      );
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', abort);
    }
  }

  async close(): Promise<void> {
    const agents = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  }
}

/** An outbound span names the method and the destination host: never the path or query. */
function outboundAttributes(method: string, url: string): Record<string, string> {
  let host = 'invalid';
  try {
    host = new URL(url).hostname;
  } catch {
    // an unparsable URL fails in the request itself
  }
  return { 'http.request.method': method, 'server.address': host };
}

function findEgressDenial(err: unknown): EgressDeniedError | null {
  let e: unknown = err;
  for (let i = 0; i < 5 && e; i++) {
    if (e instanceof EgressDeniedError) return e;
    if (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'EGRESS_DENIED') {
      const d = e as { address?: string; reason?: string };
      return new EgressDeniedError(d.address ?? '', d.reason ?? 'denied');
    }
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

function classifyFailure(err: unknown, aborted: boolean): OutboundResult {
  const denied = findEgressDenial(err);
  if (denied) return { kind: 'egress_denied', reason: denied.reason };
  const code = (err as { code?: unknown } | null)?.code;
  if (
    aborted ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  )
    return { kind: 'timeout' };
  return { kind: 'network_error', code: typeof code === 'string' ? code : 'unknown' };
}
