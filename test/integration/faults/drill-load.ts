// Bounded load through each hot path of a running `serve`, recording every answer: a success, a
// 503 in the right form (problem document or OAuth error, with Retry-After), or a violation (a
// 500, an unexpected status, a connection failure of the server itself, or no answer in time).
// Authorization codes come from headless sign-ins to completion and are redeemed at the token
// endpoint; a redemption whose answer was a 503, or whose answer the load drops on purpose (an
// answer lost on its way back), is retried later by two concurrent requests, as impatient clients
// would: at most one redemption of a code may ever answer 200.
import { newVerifier, startBody } from '../../harness/signin-driver.ts';
import { codeOf, PASSWORD, REDIRECT } from '../../harness/signin-kit.ts';
import { basic } from '../../harness/token-kit.ts';
import { CODE_START, type Creds, type DrillSeed } from './drill-seed.ts';

export type OpName =
  | 'admin.read'
  | 'admin.write'
  | 'signin.start'
  | 'introspect'
  | 'me.sessions'
  | 'client_credentials'
  | 'refresh'
  | 'code';

export const OPS: readonly OpName[] = [
  'admin.read',
  'admin.write',
  'signin.start',
  'introspect',
  'me.sessions',
  'client_credentials',
  'refresh',
  'code',
];

export interface Answer {
  op: OpName;
  at: number;
  outcome: 'success' | 'unavailable' | 'violation';
  status: number;
  detail?: string;
}

const REQUEST_LIMIT_MS = 20_000;
/** Every LOSE_EVERY-th fresh redemption's answer is dropped, as if lost in transit, and retried. */
const LOSE_EVERY = 5;
/** A code whose redemptions keep answering 503 is given up after this many rounds (it stays checked). */
const REDEEM_ROUNDS = 6;

/** A code whose redemption's outcome the client does not know, to redeem again. */
interface Unsettled {
  txId: string;
  code: string;
  verifier: string;
  rounds: number;
}

interface Sent {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export class DrillLoad {
  readonly answers: Answer[] = [];
  /** Users the administration API answered 201 for. */
  readonly createdUsers = new Set<string>();
  /** Refresh families whose rotation answered 503: the rotation may have committed before the fault. */
  private readonly uncertain = new Set<number>();
  private readonly retired = new Set<number>();
  private readonly rotating = new Set<number>();
  private refreshSeq = 0;
  /** Per sign-in transaction, how many redemptions of its code answered 200 (seen or dropped). */
  readonly codeGrants = new Map<string, number>();
  /** Codes redeemed again by two concurrent requests, and how often that happened. */
  readonly codeRetries = { rounds: 0, answered: 0, alreadyUsed: 0 };
  private readonly unsettled: Unsettled[] = [];
  private fresh = 0;
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;
  private userSeq = 0;

  private readonly url: string;
  private readonly seed: DrillSeed;

  constructor(url: string, seed: DrillSeed) {
    this.url = url;
    this.seed = seed;
  }

  start(concurrency = 4): void {
    this.running = true;
    this.loops = Array.from({ length: concurrency }, () => this.loop());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const op = OPS[this.next++ % OPS.length] as OpName;
      this.answers.push(await this.run(op));
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  private async send(path: string, init: RequestInit): Promise<Sent> {
    const res = await fetch(`${this.url}${path}`, { ...init, signal: AbortSignal.timeout(REQUEST_LIMIT_MS) });
    const text = await res.text();
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      body = { raw: text.slice(0, 200) };
    }
    return { status: res.status, headers: res.headers, body };
  }

  private form(endpoint: string, params: Record<string, string>, creds: Creds): Promise<Sent> {
    return this.send(`/realms/${this.seed.realm.name}/oauth/${endpoint}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(creds.clientId, creds.secret),
      },
      body: new URLSearchParams(params).toString(),
    });
  }

  private api(method: string, path: string, token: string, body?: unknown): Promise<Sent> {
    return this.send(`/api/v1/realms/${this.seed.realm.name}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  private async run(op: OpName): Promise<Answer> {
    const at = Date.now();
    try {
      return { op, at, ...(await this.attempt(op)) };
    } catch (e) {
      return { op, at, outcome: 'violation', status: 0, detail: `no answer: ${(e as Error).message}` };
    }
  }

  private async attempt(op: OpName): Promise<Omit<Answer, 'op' | 'at'>> {
    const s = this.seed;
    switch (op) {
      case 'admin.read':
        return judge(await this.api('GET', '/users?limit=5', s.adminToken), 200, false);
      case 'admin.write': {
        const r = await this.api('POST', '/users', s.adminToken, {
          email: `load-${process.pid}-${this.userSeq++}@example.com`,
        });
        if (r.status === 201) this.createdUsers.add(String(r.body.id));
        return judge(r, 201, false);
      }
      case 'signin.start':
        return judge(
          await this.api(
            'POST',
            '/auth/transactions',
            '',
            startBody(s.web.clientId, REDIRECT, newVerifier()),
          ),
          201,
          false,
        );
      case 'introspect':
        return judge(await this.form('introspect', { token: s.accessToken }, s.introspector), 200, true);
      case 'me.sessions':
        return judge(await this.api('GET', '/me/sessions', s.accountToken), 200, false);
      case 'client_credentials':
        return judge(await this.form('token', { grant_type: 'client_credentials' }, s.service), 200, true);
      case 'refresh':
        return this.rotate();
      case 'code':
        return this.unsettled.length > 0
          ? this.redeemAgain(this.unsettled.shift() as Unsettled)
          : this.signIn();
    }
  }

  /** A headless sign-in (start, identify, password) to its code, then the code redeemed. */
  private async signIn(): Promise<Omit<Answer, 'op' | 'at'>> {
    const s = this.seed;
    const verifier = newVerifier();
    const start = await this.api(
      'POST',
      '/auth/transactions',
      '',
      startBody(s.web.clientId, REDIRECT, verifier, CODE_START),
    );
    if (start.status !== 201) return judge(start, 201, false);
    const txId = String(start.body.transaction_id);
    const step = (path: string, body: unknown) =>
      this.send(`/api/v1/realms/${s.realm.name}/auth/transactions/${txId}/${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-transaction-token': String(start.body.continuation_token),
        },
        body: JSON.stringify(body),
      });
    const identified = await step('identify', { identifier: s.email });
    if (identified.status !== 200) return judge(identified, 200, false);
    const done = await step('password', { password: PASSWORD });
    if (done.status !== 200 || done.body.status !== 'completed') return judge(done, 200, false);
    const code = codeOf(String(done.body.redirect_to));
    const r = await this.redeem(txId, code, verifier);
    const lost = r.status === 200 && ++this.fresh % LOSE_EVERY === 0;
    if (r.status === 503 || lost) this.unsettled.push({ txId, code, verifier, rounds: 0 });
    return this.grantsOnce(txId) ?? judge(r, 200, true);
  }

  private async redeem(txId: string, code: string, verifier: string): Promise<Sent> {
    const r = await this.form(
      'token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      this.seed.web,
    );
    if (r.status === 200) this.codeGrants.set(txId, (this.codeGrants.get(txId) ?? 0) + 1);
    return r;
  }

  /** A violation when a code's redemptions answered 200 more than once. */
  private grantsOnce(txId: string): Omit<Answer, 'op' | 'at'> | null {
    const n = this.codeGrants.get(txId) ?? 0;
    return n > 1
      ? { outcome: 'violation', status: 200, detail: `code of ${txId} redeemed ${n} times` }
      : null;
  }

  /**
   * Redeems an unsettled code again with two concurrent requests: each answers 200 (the earlier
   * redemption did not commit; at most one of the two), invalid_grant "code already used" (it
   * did, or the other request won; the replay revokes what the code issued), or 503 again.
   */
  private async redeemAgain(u: Unsettled): Promise<Omit<Answer, 'op' | 'at'>> {
    this.codeRetries.rounds++;
    const answers = await Promise.all([1, 2].map(() => this.redeem(u.txId, u.code, u.verifier)));
    const twice = this.grantsOnce(u.txId);
    if (twice) return twice;
    const judged = answers.map((r) => {
      if (
        r.status === 400 &&
        r.body.error === 'invalid_grant' &&
        /already used/.test(String(r.body.error_description))
      ) {
        this.codeRetries.alreadyUsed++;
        return { outcome: 'success', status: 400 } as const;
      }
      if (r.status === 200) this.codeRetries.answered++;
      return judge(r, 200, true);
    });
    const violation = judged.find((j) => j.outcome === 'violation');
    if (violation) return violation;
    const settled = judged.find((j) => j.outcome === 'success');
    if (settled) return { ...settled, detail: 'redeemed again' };
    if (++u.rounds < REDEEM_ROUNDS) this.unsettled.push(u);
    return judged[0] as Omit<Answer, 'op' | 'at'>;
  }

  private async rotate(): Promise<Omit<Answer, 'op' | 'at'>> {
    const s = this.seed;
    // One rotation per family at a time: a client racing itself with one refresh token is reuse
    // by its own doing, not a fault of the service.
    const free = s.refreshTokens
      .map((_, i) => i)
      .filter((i) => !this.retired.has(i) && !this.rotating.has(i));
    const family = free[this.refreshSeq++ % Math.max(1, free.length)];
    if (family === undefined) return { outcome: 'success', status: 0, detail: 'no family free to rotate' };
    this.rotating.add(family);
    try {
      return await this.rotateFamily(family);
    } finally {
      this.rotating.delete(family);
    }
  }

  private async rotateFamily(family: number): Promise<Omit<Answer, 'op' | 'at'>> {
    const s = this.seed;
    const token = s.refreshTokens[family] as string;
    const r = await this.form('token', { grant_type: 'refresh_token', refresh_token: token }, s.web);
    if (r.status === 200) {
      s.refreshTokens[family] = String(r.body.refresh_token);
      this.uncertain.delete(family);
    } else if (r.status === 503) this.uncertain.add(family);
    else if (r.status === 400 && r.body.error === 'invalid_grant' && this.uncertain.has(family)) {
      // A rotation whose commit landed but whose answer was lost: presenting the old token again
      // is reuse, and the family is revoked. Correct single use, not a fault of the drill.
      this.retired.add(family);
      return { outcome: 'success', status: 400, detail: 'reuse after an uncertain rotation' };
    }
    return judge(r, 200, true);
  }

  /** Every kind of call answered with success at least once at or after `since`; the time of the last first success. */
  recoveredAt(since: number): number | null {
    let latest = since;
    for (const op of OPS) {
      const first = this.answers.find((a) => a.op === op && a.at >= since && a.outcome === 'success');
      if (!first) return null;
      latest = Math.max(latest, first.at);
    }
    return latest;
  }

  /** What the code redemptions came to, for the drill report. */
  codeReport() {
    return {
      codes_answered_200: this.codeGrants.size,
      redeemed_again: this.codeRetries.rounds,
      again_200: this.codeRetries.answered,
      again_already_used: this.codeRetries.alreadyUsed,
      still_unsettled: this.unsettled.length,
    };
  }

  violations(): Answer[] {
    return this.answers.filter((a) => a.outcome === 'violation');
  }

  count(outcome: Answer['outcome'], from = 0, to = Number.POSITIVE_INFINITY): number {
    return this.answers.filter((a) => a.outcome === outcome && a.at >= from && a.at < to).length;
  }
}

/** A success, a well-formed 503, or a violation with what was wrong. */
function judge(r: Sent, success: number, oauth: boolean): Omit<Answer, 'op' | 'at'> {
  if (r.status === success) return { outcome: 'success', status: r.status };
  const detail = JSON.stringify(r.body).slice(0, 300);
  if (r.status !== 503) return { outcome: 'violation', status: r.status, detail };
  const retryAfter = r.headers.get('retry-after');
  const code = oauth ? r.body.error : r.body.code;
  const wellFormed =
    retryAfter !== null &&
    /^\d+$/.test(retryAfter) &&
    (code === 'temporarily_unavailable' || (!oauth && code === 'request_timeout'));
  return wellFormed
    ? { outcome: 'unavailable', status: 503 }
    : { outcome: 'violation', status: 503, detail: `malformed 503 (retry-after ${retryAfter}): ${detail}` };
}
