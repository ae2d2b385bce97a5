// Lookups asked for in one turn of the event loop, answered together: the load runs once for every
// key asked, after the turn's callers have all asked (setImmediate), so what it reads is never
// older than any caller's question. Concurrent requests that each need the same small fact (a
// revision) then share one statement and one round trip instead of paying one each.
interface Waiter<V> {
  resolve: (value: V | undefined) => void;
  reject: (e: unknown) => void;
}

export class TurnBatch<V> {
  private pending: Map<string, Waiter<V>[]> | null = null;
  private readonly load: (keys: string[]) => Promise<ReadonlyMap<string, V>>;

  constructor(load: (keys: string[]) => Promise<ReadonlyMap<string, V>>) {
    this.load = load;
  }

  /** The value of `key` as the next load reads it; undefined when the load has none. */
  get(key: string): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      if (this.pending === null) {
        this.pending = new Map();
        setImmediate(() => this.flush());
      }
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = null;
    if (batch === null) return;
    this.load([...batch.keys()]).then(
      (values) => {
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(values.get(key));
      },
      (e: unknown) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(e);
      },
    );
  }
}
