// Realms by name for request routing, kept for a second per process: every request names its
// realm, and the row (id, name, state) changes only on creation and suspension. A process that
// changes a realm forgets it at once; other processes see the change within REALM_CACHE_MS
// (docs/decisions.md). Policies are not cached: they are read where they are used.
import { hasNul } from '../kernel/text.ts';
import type { Clock } from '../platform/clock.ts';
import type { Queryable } from '../platform/db/db.ts';
import { findRealmByName, type RealmRow } from './realm.repo.ts';

export const REALM_CACHE_MS = 1000;
const MAX_ENTRIES = 10_000; // bounded: realm names come from URLs

export class RealmCache {
  private readonly entries = new Map<string, { until: number; realm: RealmRow | null }>();
  private readonly db: Queryable;
  private readonly clock: Clock;

  constructor(db: Queryable, clock: Clock) {
    this.db = db;
    this.clock = clock;
  }

  async byName(name: string): Promise<RealmRow | null> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(name);
    if (hit && hit.until > now) return hit.realm;
    const realm = await findRealmByName(this.db, name);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(name, { until: now + REALM_CACHE_MS, realm });
    return realm;
  }

  /** After a change to realms made by this process (and by tests that change rows directly). */
  forget(name?: string): void {
    if (name === undefined) this.entries.clear();
    else this.entries.delete(name);
  }
}

/** The active realm a request names; a suspended realm or a name no realm can have is not found. */
export async function findRequestedRealm(
  deps: { realms: RealmCache },
  realmName: string,
): Promise<RealmRow | null> {
  const realm = hasNul(realmName) ? null : await deps.realms.byName(realmName);
  return realm?.state === 'active' ? realm : null;
}
