// Audit records are written inside the caller's transaction, so a failed audit write fails the
// whole use case. An entry carrying a security signal also raises a security.alert event.
import type { EventType } from '../events/catalog.ts';
import { addEvent, eventInsert, type NewEvent } from '../events/index.ts';
import { type Companion, together } from '../platform/db/companions.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { AuditEntry, SecuritySignal } from './audit.types.ts';

type SignalListener = (signal: SecuritySignal) => void;
const signalListeners = new Set<SignalListener>();

/**
 * Called with each security.alert written (service_security_signals_total). The process wires its
 * metrics here once (main/context.ts); returns the function that unwires it.
 */
export function onSecuritySignal(listener: SignalListener): () => void {
  signalListeners.add(listener);
  return () => signalListeners.delete(listener);
}

const AUDIT_INSERT = `insert into audit_events (id, realm_id, occurred_at, type, category, outcome, actor_type,
       actor_id, subject_type, subject_id, target_type, target_id, org_id, correlation_id, signal, reason, data,
       corrects_event_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`;

function auditParams(id: string, e: AuditEntry, occurredAt: Date): unknown[] {
  return [
    id,
    e.realmId,
    occurredAt,
    e.type,
    e.category,
    e.outcome ?? 'success',
    e.actor.type,
    e.actor.id,
    e.subject?.type ?? null,
    e.subject?.id ?? null,
    e.target?.type ?? null,
    e.target?.id ?? null,
    e.orgId ?? null,
    e.correlationId ?? null,
    e.signal ?? null,
    e.reason ?? null,
    JSON.stringify(e.data ?? {}),
    e.correctsEventId ?? null,
  ];
}

export async function recordAudit(tx: Tx, e: AuditEntry, occurredAt: Date): Promise<string> {
  const id = newId('aud', occurredAt.getTime());
  await tx.query(AUDIT_INSERT, auditParams(id, e, occurredAt));
  if (e.signal && e.realmId) {
    await addEvent(tx, {
      realmId: e.realmId,
      type: 'security.alert',
      occurredAt,
      ...(e.orgId ? { orgId: e.orgId } : {}),
      ...(e.correlationId ? { correlationId: e.correlationId } : {}),
      data: {
        signal: e.signal,
        audit_event_id: id,
        event_type: e.type,
        actor_type: e.actor.type,
        actor_id: e.actor.id,
        ...(e.subject ? { subject_type: e.subject.type, subject_id: e.subject.id } : {}),
      },
    });
    for (const listener of signalListeners) listener(e.signal);
  }
  return id;
}

/**
 * An audit record and an outbox event of the same change, in one statement (a sign-in writes both
 * on its hot path). An entry with a security signal takes recordAudit's way, which adds its alert.
 */
export async function recordAuditWithEvent<T extends EventType>(
  tx: Tx,
  e: AuditEntry,
  event: NewEvent<T>,
  occurredAt: Date,
): Promise<void> {
  if (e.signal) {
    await recordAudit(tx, e, occurredAt);
    await addEvent(tx, event);
    return;
  }
  const params = auditParams(newId('aud', occurredAt.getTime()), e, occurredAt);
  const insert = eventInsert(event, params.length + 1);
  await tx.query(`with audit as (${AUDIT_INSERT}) ${insert.sql}`, [...params, ...insert.params]);
}

/**
 * An audit record (and an outbox event, when given) written by the same statement as `main`, an
 * insert, update or delete whose rows come back, and as `parts`, more writes of the same change (a sign-in's hot path writes each of these with a
 * change of its own). An entry with a security signal takes recordAudit's way, which adds its
 * alert, and runs `main` alone.
 */
export async function recordAuditAlong<R, T extends EventType = EventType>(
  tx: Tx,
  e: AuditEntry,
  occurredAt: Date,
  main: Companion,
  event?: NewEvent<T>,
  parts: readonly Companion[] = [],
): Promise<R[]> {
  if (e.signal) {
    await recordAudit(tx, e, occurredAt);
    if (event) await addEvent(tx, event);
    const alone = together(main, ...parts);
    return (await tx.query<R>(alone.sql, alone.params)).rows;
  }
  const audit = { sql: AUDIT_INSERT, params: auditParams(newId('aud', occurredAt.getTime()), e, occurredAt) };
  const joined = together(main, ...parts, audit, ...(event ? [eventInsert(event)] : []));
  return (await tx.query<R>(joined.sql, joined.params)).rows;
}
