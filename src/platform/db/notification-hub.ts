// One LISTEN per process and channel, shared by every request that waits on it (the long poll of
// GET /session-events): a waiter is woken by a notification for its key, by the end of its wait, or
// by a fault of the listening connection, never by polling the database. The connection is opened
// for the first waiter and closed a little after the last one leaves.
import type { Db } from './db.ts';

export type WakeReason = 'notified' | 'timeout' | 'closed';

export interface Watch {
  /**
   * Resolves 'notified' once a notification for the key has arrived since watch() or the previous
   * call, 'timeout' after `ms`, 'closed' when the hub closes or `signal` aborts; rejects with the
   * fault when the listening connection fails meanwhile.
   */
  next(ms: number, signal?: AbortSignal): Promise<WakeReason>;
  end(): void;
}

interface Waiter {
  key: string;
  pending: boolean;
  fault: Error | null;
  wake: (() => void) | null;
}

/** How long the connection stays after the last waiter left: pollers come straight back. */
const LINGER_MS = 5000;

export class NotificationHub {
  private readonly waiters = new Set<Waiter>();
  private listening: Promise<() => Promise<void>> | null = null;
  private idle: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly db: Db;
  private readonly channel: string;

  constructor(db: Db, channel: string) {
    this.db = db;
    this.channel = channel;
  }

  /** Watches `key`; resolves once notifications for it are being received (rejects on a fault). */
  async watch(key: string): Promise<Watch> {
    if (this.closed) throw new Error('the notification hub is closed');
    const w: Waiter = { key, pending: false, fault: null, wake: null };
    this.waiters.add(w);
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    try {
      await this.ensureListening();
    } catch (e) {
      this.leave(w);
      throw e;
    }
    return { next: (ms, signal) => this.next(w, ms, signal), end: () => this.leave(w) };
  }

  /** Wakes every waiter with 'closed' and stops listening (server shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters) w.wake?.();
    this.waiters.clear();
    await this.stopListening();
  }

  private ensureListening(): Promise<unknown> {
    if (this.listening) return this.listening;
    const listen = this.db.listen;
    if (!listen) return Promise.reject(new Error('this database cannot listen for notifications'));
    const started = listen.call(
      this.db,
      this.channel,
      (payload) => this.notify(payload),
      (e) => this.lose(started, e),
    );
    this.listening = started;
    // A failed start leaves nothing listening: the next waiter tries again.
    started.catch(() => {
      if (this.listening === started) this.listening = null;
    });
    return started;
  }

  private notify(key: string): void {
    for (const w of this.waiters) {
      if (w.key !== key) continue;
      w.pending = true;
      w.wake?.();
    }
  }

  private lose(which: Promise<unknown>, e: Error): void {
    if (this.listening !== which) return;
    this.listening = null;
    for (const w of this.waiters) {
      w.fault = e;
      w.wake?.();
    }
  }

  private next(w: Waiter, ms: number, signal?: AbortSignal): Promise<WakeReason> {
    const settled = (): WakeReason | null => {
      if (w.fault) throw w.fault;
      if (w.pending) {
        w.pending = false;
        return 'notified';
      }
      if (this.closed || signal?.aborted) return 'closed';
      return null;
    };
    try {
      const now = settled();
      if (now) return Promise.resolve(now);
    } catch (e) {
      return Promise.reject(e);
    }
    if (ms <= 0) return Promise.resolve('timeout');
    return new Promise<WakeReason>((resolve, reject) => {
      const finish = (timedOut: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        w.wake = null;
        try {
          resolve(settled() ?? (timedOut ? 'timeout' : 'closed'));
        } catch (e) {
          reject(e);
        }
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(true), ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      w.wake = () => finish(false);
    });
  }

  private leave(w: Waiter): void {
    w.wake = null;
    this.waiters.delete(w);
    if (this.waiters.size > 0 || this.closed || !this.listening) return;
    this.idle = setTimeout(() => {
      this.idle = null;
      if (this.waiters.size === 0) void this.stopListening();
    }, LINGER_MS);
    this.idle.unref();
  }

  private async stopListening(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    const listening = this.listening;
    this.listening = null;
    if (!listening) return;
    try {
      await (await listening)();
    } catch {
      // It never started or already broke: nothing is listening either way.
    }
  }
}
