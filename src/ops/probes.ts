// Dependency probes shared by readiness, the operator status object and the scrape-time gauges.
import { type UnsealedState, unsealedState } from '../audit/index.ts';
import { oldestPendingSeconds } from '../events/index.ts';
import { oldestQueuedJobSeconds } from '../jobs/index.ts';
import type { KeyStore, SigningHealth } from '../keys/key-store.ts';
import { oldestDueSeconds as oldestDueNotificationSeconds } from '../notifications/index.ts';
import type { Clock } from '../platform/clock.ts';
import type { Db } from '../platform/db/db.ts';
import { type Migration, type SchemaState, schemaState } from '../platform/db/migrate.ts';
import { restoreMarkerSet } from '../platform/restore-marker.ts';
import { oldestDueSeconds as oldestDueDeliverySeconds } from '../webhooks/index.ts';

const PROBE_TIMEOUT_MS = 2000;

/** Resolves to the probe's value, or throws when the database does not answer in time. */
async function withDeadline<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ProbeContext {
  db: Db;
  clock: Clock;
  keyStore: KeyStore;
  migrations: Migration[];
}

export async function databaseUp(ctx: ProbeContext): Promise<boolean> {
  try {
    await withDeadline(ctx.db.query('select 1'));
    return true;
  } catch {
    return false;
  }
}

/** Server clock minus database clock, latency of the query included (spec doc 2, status object). */
export async function clockSkewMs(ctx: ProbeContext): Promise<number> {
  const r = await withDeadline(ctx.db.query<{ t: Date }>('select clock_timestamp() as t'));
  const dbTime = r.rows[0]?.t;
  if (!dbTime) throw new Error('no database time');
  return ctx.clock.now().getTime() - new Date(dbTime).getTime();
}

/** Whether the restore marker is set (spec doc 2, Restore marker). */
export const restorePending = (ctx: ProbeContext): Promise<boolean> => withDeadline(restoreMarkerSet(ctx.db));

export const schema = (ctx: ProbeContext): Promise<SchemaState> =>
  withDeadline(schemaState(ctx.db, ctx.migrations));

export const signing = (ctx: ProbeContext): Promise<SigningHealth> =>
  withDeadline(ctx.keyStore.signingHealth());

/** Age in seconds of the oldest undispatched outbox event; 0 when none. */
export const outboxBacklog = (ctx: ProbeContext): Promise<number> =>
  withDeadline(oldestPendingSeconds(ctx.db, ctx.clock.now()));

/** Age in seconds of the oldest due notification not yet sent; 0 when none. */
export const notificationBacklog = (ctx: ProbeContext): Promise<number> =>
  withDeadline(oldestDueNotificationSeconds(ctx.db, ctx.clock.now()));

export const jobsBacklog = (ctx: ProbeContext): Promise<number> =>
  withDeadline(oldestQueuedJobSeconds(ctx.db, ctx.clock.now()));

/** Seconds the oldest due webhook delivery has waited; 0 when none. */
export const webhooksBacklog = (ctx: ProbeContext): Promise<number> =>
  withDeadline(oldestDueDeliverySeconds(ctx.db, ctx.clock.now()));

/** Audit events not sealed into a batch yet: how many, and the age of the oldest (0 when none). */
export const auditUnsealed = (ctx: ProbeContext): Promise<UnsealedState> =>
  withDeadline(unsealedState(ctx.db, ctx.clock.now()));
