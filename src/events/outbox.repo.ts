// The transactional outbox: events commit with the change that caused them (spec doc 2, Events).
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { TransactionQueueDefinition } from '../platform/work-queue/work-queue.ts';
import type { EventData, EventType } from './catalog.ts';

/** The outbox as a work queue without leases: events wait until a dispatch transaction commits them. */
export const OUTBOX_QUEUE: TransactionQueueDefinition = {
  table: 'outbox',
  pending: 'dispatched_at is null',
  order: 'occurred_at, id',
};

export interface NewEvent<T extends EventType> {
  realmId: string;
  type: T;
  data: EventData[T];
  occurredAt: Date;
  orgId?: string;
  correlationId?: string;
}

/**
 * The insert of one event with its parameters numbered from `first`, so another statement can
 * carry it (audit.repo.ts writes an audit record and its event in one statement).
 */
export function eventInsert<T extends EventType>(
  e: NewEvent<T>,
  first = 1,
): { id: string; sql: string; params: unknown[] } {
  const id = newId('obx', e.occurredAt.getTime());
  const n = (i: number) => `$${first + i}`;
  return {
    id,
    sql: `insert into outbox (realm_id, id, event_type, event_version, occurred_at, org_id, correlation_id, data)
     values (${n(0)}, ${n(1)}, ${n(2)}, 1, ${n(3)}, ${n(4)}, ${n(5)}, ${n(6)})`,
    params: [
      e.realmId,
      id,
      e.type,
      e.occurredAt,
      e.orgId ?? null,
      e.correlationId ?? null,
      JSON.stringify(e.data),
    ],
  };
}

export async function addEvent<T extends EventType>(tx: Tx, e: NewEvent<T>): Promise<string> {
  const insert = eventInsert(e);
  await tx.query(insert.sql, insert.params);
  return insert.id;
}

/** Age in seconds of the oldest event not yet dispatched; 0 when none. */
export async function oldestPendingSeconds(q: Pick<Tx, 'query'>, now: Date): Promise<number> {
  const r = await q.query<{ oldest: Date | null }>(
    'select min(occurred_at) as oldest from outbox where dispatched_at is null',
  );
  const oldest = r.rows[0]?.oldest;
  return oldest ? Math.max(0, Math.floor((now.getTime() - new Date(oldest).getTime()) / 1000)) : 0;
}
