// The verifier's side of GET /session-events: a client-credentials token for the realm's
// administration audience (kept until shortly before it expires), and one page read.
import type { SessionEvent } from './revocation-state.ts';

export interface StreamClientOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
  streamUri?: string;
  tokenUri?: string;
  fetch?: typeof fetch;
}

export type PageAnswer =
  | { kind: 'page'; events: SessionEvent[]; nextCursor: string }
  /** 410 cursor_expired: the events after the cursor were pruned; start again without one. */
  | { kind: 'expired' };

/** {origin}/realms/{realm} -> {origin}/api/v1/realms/{realm}/session-events */
export function streamUriOf(issuer: string): string {
  const u = new URL(issuer);
  const m = /^\/realms\/([^/]+)\/?$/.exec(u.pathname);
  if (!m) throw new RangeError(`cannot derive the session-event address from issuer ${issuer}`);
  return `${u.origin}/api/v1/realms/${m[1]}/session-events`;
}

export class StreamClient {
  private readonly opts: StreamClientOptions;
  private readonly doFetch: typeof fetch;
  private token: { value: string; until: number } | null = null;

  constructor(opts: StreamClientOptions) {
    this.opts = opts;
    this.doFetch = opts.fetch ?? fetch;
  }

  private async accessToken(signal: AbortSignal): Promise<string> {
    if (this.token && Date.now() < this.token.until) return this.token.value;
    const basic = Buffer.from(
      `${encodeURIComponent(this.opts.clientId)}:${encodeURIComponent(this.opts.clientSecret)}`,
    ).toString('base64');
    const res = await this.doFetch(this.opts.tokenUri ?? `${this.opts.issuer}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
      signal,
    });
    const body = (await res.json()) as { access_token?: string; expires_in?: number };
    if (res.status !== 200 || typeof body.access_token !== 'string')
      throw new Error(`the token endpoint answered ${res.status}`);
    const life = Math.max(0, (body.expires_in ?? 60) - 30) * 1000;
    this.token = { value: body.access_token, until: Date.now() + life };
    return body.access_token;
  }

  async read(cursor: string | null, waitSeconds: number, signal: AbortSignal): Promise<PageAnswer> {
    const u = new URL(this.opts.streamUri ?? streamUriOf(this.opts.issuer));
    if (cursor !== null) u.searchParams.set('cursor', cursor);
    if (waitSeconds > 0) u.searchParams.set('wait', String(waitSeconds));
    const res = await this.doFetch(u, {
      headers: { authorization: `Bearer ${await this.accessToken(signal)}`, accept: 'application/json' },
      signal: AbortSignal.any([signal, AbortSignal.timeout((waitSeconds + 10) * 1000)]),
    });
    if (res.status === 401) this.token = null;
    if (res.status === 410) {
      await res.body?.cancel();
      return { kind: 'expired' };
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`the session-event stream answered ${res.status}`);
    }
    const body = (await res.json()) as { events?: SessionEvent[]; next_cursor?: string };
    if (!Array.isArray(body.events) || typeof body.next_cursor !== 'string')
      throw new Error('the session-event stream answered an unexpected body');
    return { kind: 'page', events: body.events, nextCursor: body.next_cursor };
  }
}
