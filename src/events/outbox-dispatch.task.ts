// Worker tasks for the transactional outbox (spec doc 2, Events and Data lifecycle 3).
// outbox.dispatch hands each committed event to its destinations and marks it dispatched, all in
// one transaction: a destination that fails leaves the batch pending for the next run, so no event
// is marked dispatched without having reached its destinations. The destinations (webhook fan-out)
// are given by the composition root, which keeps this context below the ones that consume events.
// outbox.cleanup deletes dispatched events after seven days.

import type { TaskReport } from '../kernel/task.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { claimForTransaction } from '../platform/work-queue/work-queue.ts';
import { OUTBOX_QUEUE } from './outbox.repo.ts';

export const DISPATCH_BATCH = 500;
export const DISPATCHED_RETENTION_MS = 7 * 24 * 3600 * 1000;
const CLEANUP_BATCH = 5000;

/** One committed event as its destinations see it. */
export interface OutboxEvent {
  realmId: string;
  id: string;
  type: string;
  occurredAt: Date;
  orgId: string | null;
  correlationId: string | null;
  data: Record<string, unknown>;
  /**
   * The transaction that wrote the event (PostgreSQL xid8, as text), so a destination can tell what
   * had committed before it; null for events written before transaction ids were recorded.
   */
  txId: string | null;
}

/** Takes a batch of events inside the dispatch transaction (e.g. queues webhook deliveries). */
export type OutboxDestination = (tx: Tx, events: readonly OutboxEvent[], now: Date) => Promise<void>;

interface OutboxRow {
  realm_id: string;
  id: string;
  event_type: string;
  occurred_at: Date;
  org_id: string | null;
  correlation_id: string | null;
  data: Record<string, unknown> | string;
  /** xid8, which both drivers read as text. */
  tx_id: string | null;
}

const eventOf = (r: OutboxRow): OutboxEvent => ({
  realmId: r.realm_id,
  id: r.id,
  type: r.event_type,
  occurredAt: new Date(r.occurred_at),
  orgId: r.org_id,
  correlationId: r.correlation_id,
  data: typeof r.data === 'string' ? (JSON.parse(r.data) as Record<string, unknown>) : r.data,
  txId: r.tx_id,
});

export interface OutboxDispatchDeps {
  db: Db;
  /** Told the event types of each committed batch (service_security_events_total). */
  eventsDispatched?: (types: readonly string[]) => void;
}

export async function dispatchOutboxTo(
  deps: OutboxDispatchDeps,
  now: Date,
  destinations: readonly OutboxDestination[],
): Promise<TaskReport> {
  let dispatched = 0;
  for (;;) {
    const batch = await deps.db.tx(async (tx) => {
      // Held by this transaction (SKIP LOCKED: several workers drain the outbox side by side).
      const rows = await claimForTransaction<OutboxRow>(tx, OUTBOX_QUEUE, DISPATCH_BATCH);
      if (rows.length === 0) return [];
      const events = rows.map(eventOf);
      for (const d of destinations) await d(tx, events, now);
      await tx.query(
        `update outbox set dispatched_at = $1
          where (realm_id, id) in (select * from unnest($2::text[], $3::text[]))`,
        [now, events.map((e) => e.realmId), events.map((e) => e.id)],
      );
      return events;
    });
    if (batch.length > 0) deps.eventsDispatched?.(batch.map((e) => e.type));
    const n = batch.length;
    dispatched += n;
    if (n < DISPATCH_BATCH) return { dispatched };
  }
}

/** Dispatch with no destination: the events are only marked (tests of the outbox alone). */
export const dispatchOutbox = (deps: { db: Db }, now: Date): Promise<TaskReport> =>
  dispatchOutboxTo(deps, now, []);

export async function cleanupOutbox(deps: { db: Db }, now: Date): Promise<TaskReport> {
  const r = await deps.db.query(
    `delete from outbox where (realm_id, id) in (
       select realm_id, id from outbox where dispatched_at < $1 limit ${CLEANUP_BATCH})`,
    [new Date(now.getTime() - DISPATCHED_RETENTION_MS)],
  );
  return { deleted: r.rowCount };
}
