// Bounded-state verification (document 2, Revocation exposure; document 1, Limits): offline
// verification plus the revocations replayed from the session-event stream. The state counts as
// fresh only from a read that reached the end of the stream (a page below 500 events); once the
// last such read is older than the staleness bound, every verification fails closed until the
// stream is read to the end again.

import type { DpopRequest } from './dpop.ts';
import { invalidToken, VerificationError } from './errors.ts';
import { type OfflineOptions, type OfflineVerifier, offlineVerifier, type Verified } from './offline.ts';
import { RevocationState } from './revocation-state.ts';
import { StreamClient, type StreamClientOptions } from './stream-client.ts';

/** Document 1, realm API table: a page holds up to 500 events; a shorter one is the end. */
const PAGE_SIZE = 500;

export interface BoundedStateOptions extends OfflineOptions {
  /** A service client with an admin-audience grant holding realm.session_events.read. */
  streamClientId: string;
  streamClientSecret: string;
  /** Default `{origin}/api/v1/realms/{realm}/session-events`, from the issuer. */
  streamUri?: string;
  tokenUri?: string;
  /** How old the last read to the end may be before verification fails closed (default 60 s). */
  stalenessBoundMs?: number;
  /** The long poll's wait, 1..25 s and below the staleness bound (default 20 s). */
  waitSeconds?: number;
  /** Pause after a failed read (default 1 s). */
  retryDelayMs?: number;
  fetch?: typeof fetch;
  /** Told about every failed read (the verifier keeps trying). */
  onSyncError?: (e: Error) => void;
  /** Told after every read that reached the end of the stream, with the events it applied. */
  onSync?: (applied: number) => void;
}

export class BoundedStateVerifier {
  private readonly offline: OfflineVerifier;
  private readonly stream: StreamClient;
  private readonly state = new RevocationState();
  private readonly now: () => number;
  private readonly boundMs: number;
  private readonly waitSeconds: number;
  private readonly retryDelayMs: number;
  private readonly onSyncError: (e: Error) => void;
  private readonly onSync: (applied: number) => void;
  private readonly stopping = new AbortController();
  private cursor: string | null = null;
  private lastSyncAt: number | null = null;
  private loop: Promise<void> | null = null;
  private readonly synced: Promise<void>;
  private markSynced: () => void = () => {};

  constructor(opts: BoundedStateOptions) {
    this.offline = offlineVerifier(opts);
    const streamOpts: StreamClientOptions = {
      issuer: opts.issuer,
      clientId: opts.streamClientId,
      clientSecret: opts.streamClientSecret,
      ...(opts.streamUri ? { streamUri: opts.streamUri } : {}),
      ...(opts.tokenUri ? { tokenUri: opts.tokenUri } : {}),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    };
    this.stream = new StreamClient(streamOpts);
    this.now = opts.now ?? Date.now;
    this.boundMs = opts.stalenessBoundMs ?? 60_000;
    this.waitSeconds = opts.waitSeconds ?? 20;
    if (!Number.isInteger(this.waitSeconds) || this.waitSeconds < 1 || this.waitSeconds > 25)
      throw new RangeError('waitSeconds must be 1..25');
    if (this.boundMs <= this.waitSeconds * 1000)
      throw new RangeError('stalenessBoundMs must be longer than the wait');
    this.retryDelayMs = opts.retryDelayMs ?? 1000;
    this.onSyncError = opts.onSyncError ?? (() => {});
    this.onSync = opts.onSync ?? (() => {});
    this.synced = new Promise((resolve) => {
      this.markSynced = resolve;
    });
  }

  /** Starts replaying the stream; resolves after the first read to its end. */
  start(): Promise<void> {
    this.loop ??= this.run();
    return this.synced;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  /** When the stream was last read to its end (ms since the epoch on the verifier's clock), or null. */
  get freshAt(): number | null {
    return this.lastSyncAt;
  }

  isFresh(): boolean {
    return this.lastSyncAt !== null && this.now() - this.lastSyncAt <= this.boundMs;
  }

  async verify(token: string, dpop?: DpopRequest): Promise<Verified> {
    if (!this.isFresh())
      throw new VerificationError('stale_state', 'the revocation state is older than its staleness bound');
    const verified = await this.offline.verify(token, dpop);
    const why = this.state.revokedBecause(verified.claims, verified.kid);
    if (why) throw invalidToken(why);
    return verified;
  }

  private async run(): Promise<void> {
    let atEnd = false;
    let applied = 0;
    while (!this.stopping.signal.aborted) {
      try {
        const wait = atEnd ? this.waitSeconds : 0;
        const sentAt = this.now();
        const answer = await this.stream.read(this.cursor, wait, this.stopping.signal);
        if (answer.kind === 'expired') {
          // Events were pruned unseen: rebuild from what the stream still holds.
          this.state.clear();
          this.cursor = null;
          this.lastSyncAt = null;
          atEnd = false;
          continue;
        }
        for (const e of answer.events) this.state.apply(e);
        applied += answer.events.length;
        // An emergency rotation compromises a key and activates a new one: take the new set now,
        // so its tokens are not refused until the key-set cooldown has passed.
        if (answer.events.some((e) => e.type === 'key_compromised'))
          await this.offline.reloadKeys().catch(() => {});
        this.cursor = answer.nextCursor;
        atEnd = answer.events.length < PAGE_SIZE;
        if (atEnd) {
          // A long poll answers at once on a commit, so its answer is current when it arrives.
          this.lastSyncAt = wait > 0 ? this.now() : sentAt;
          this.state.forget(this.now());
          this.markSynced();
          this.onSync(applied);
          applied = 0;
        }
      } catch (e) {
        if (this.stopping.signal.aborted) break;
        atEnd = false;
        this.onSyncError(e instanceof Error ? e : new Error(String(e)));
        await pause(this.retryDelayMs, this.stopping.signal);
      }
    }
  }
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
