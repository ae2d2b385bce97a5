// Which grant types an emergency control turned off in a realm, as the token endpoint asks on every
// request. Read through a short per-process cache, like the key set: the process that applied a
// control forgets its entry at once, other processes follow within GRANT_CONTROL_CACHE_MS.
import type { Clock } from '../platform/clock.ts';
import type { Queryable } from '../platform/db/db.ts';
import { disabledGrantTypes } from './emergency-controls.repo.ts';

export const GRANT_CONTROL_CACHE_MS = 5000;
const MAX_REALMS = 10_000;

export class GrantTypeControls {
  private readonly cache = new Map<string, { until: number; disabled: ReadonlySet<string> }>();
  private readonly db: Queryable;
  private readonly clock: Clock;

  constructor(db: Queryable, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  /**
   * `q`: the caller's transaction when it holds one, so a refresh never waits for a second
   * connection (the embedded database has only one).
   */
  async isDisabled(realmId: string, grantType: string, q: Queryable = this.db): Promise<boolean> {
    const now = this.clock.now().getTime();
    let entry = this.cache.get(realmId);
    if (!entry || entry.until <= now) {
      entry = {
        until: now + GRANT_CONTROL_CACHE_MS,
        disabled: new Set(await disabledGrantTypes(q, realmId)),
      };
      if (this.cache.size >= MAX_REALMS) this.cache.clear();
      this.cache.set(realmId, entry);
    }
    return entry.disabled.has(grantType);
  }

  forget(realmId: string): void {
    this.cache.delete(realmId);
  }
}
