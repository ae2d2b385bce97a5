// External policy engines (spec doc 1, Policy: policy_engine; docs/authorization.md, "External
// policy engine"). The operator names engines in authorization.policy_engines; a realm's policy
// picks one by name with a mode and an error rule. An engine speaks Open Policy Agent's data API:
// POST {"input": ...} to its URL, answer {"result": true|false} or {"result": {"allow": ...}}.
import { parseNamedUrls } from '../platform/config/named-urls.ts';
import type { Logger } from '../platform/log.ts';

export interface EngineEndpoint {
  name: string;
  url: string;
}

/** The engines an operator configured, by name. */
export type EngineTable = ReadonlyMap<string, EngineEndpoint>;

/** Parses `name=url[,name=url...]`; throws on anything else, so a bad setting stops startup. */
export const parseEngineTable = (setting: string | null): EngineTable =>
  parseNamedUrls(setting, 'authorization.policy_engines', 'engine');

export type EngineMode = 'restrict' | 'decide';
export type EngineErrorRule = 'deny' | 'local';

export interface RealmEngine {
  endpoint: EngineEndpoint;
  mode: EngineMode;
  onError: EngineErrorRule;
}

/**
 * The realm's engine: null when its policy names none; 'misconfigured' when it names one the
 * operator did not configure or gives values outside the spec's.
 */
export function realmEngine(policyEngine: unknown, table: EngineTable): RealmEngine | null | 'misconfigured' {
  if (policyEngine === null || policyEngine === undefined) return null;
  if (typeof policyEngine !== 'object' || Array.isArray(policyEngine)) return 'misconfigured';
  const p = policyEngine as { name?: unknown; mode?: unknown; on_error?: unknown };
  // An empty name is how a realm turns its engine off (docs/policy.md).
  if (p.name === '') return null;
  const mode = p.mode ?? 'restrict';
  const onError = p.on_error ?? 'deny';
  if (typeof p.name !== 'string') return 'misconfigured';
  if (mode !== 'restrict' && mode !== 'decide') return 'misconfigured';
  if (onError !== 'deny' && onError !== 'local') return 'misconfigured';
  const endpoint = table.get(p.name);
  return endpoint ? { endpoint, mode, onError } : 'misconfigured';
}

export type EngineAnswer = boolean | 'unavailable';

const MAX_ANSWER_BYTES = 64 * 1024;

function allowOf(body: unknown): boolean | null {
  const result = (body as { result?: unknown } | null)?.result;
  if (typeof result === 'boolean') return result;
  const allow = (result as { allow?: unknown } | null | undefined)?.allow;
  return typeof allow === 'boolean' ? allow : null;
}

/**
 * The body as text, or null past `max` bytes: a declared length over it is refused unread, and
 * the stream is cancelled as soon as the running count passes it, so an engine cannot make the
 * server buffer (or wait for) more.
 */
async function boundedText(res: Response, max: number): Promise<string | null> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Asks the engine; a timeout, network error, non-2xx or unreadable answer is 'unavailable'. */
export async function askEngine(
  endpoint: EngineEndpoint,
  input: unknown,
  timeoutMs: number,
  log: Logger,
): Promise<EngineAnswer> {
  let why: string;
  try {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ input }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
    const text = res.ok ? await boundedText(res, MAX_ANSWER_BYTES) : null;
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      why = `status ${res.status}`;
    } else if (text === null) why = 'answer too large';
    else {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      const allow = allowOf(body);
      if (allow !== null) return allow;
      why = 'answer has no boolean result';
    }
  } catch (e) {
    why = (e as Error).name === 'TimeoutError' ? 'timeout' : 'network error';
  }
  // The URL may carry credentials: only the engine's name is logged.
  log.warn({ engine: endpoint.name, reason: why }, 'policy engine unavailable');
  return 'unavailable';
}

/** Runs fn over items with at most `limit` at a time, answers in order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
