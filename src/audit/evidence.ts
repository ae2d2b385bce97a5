// The evidence a change leaves: its audit records and outbox events, written in the change's own
// transaction (ARCHITECTURE, Storage) with the realm, actor, correlation id and clock reading of
// one Call. A use case states what happened; the recorder fills in who, where and when.
//
// Each write happens where the use case asks for it, so the order of rows inside the transaction
// is the use case's own, a failed audit write fails the whole change, and an entry carrying a
// security signal still raises its security.alert (audit.repo.ts).

import type { EventData, EventType } from '../events/catalog.ts';
import { addEvent } from '../events/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Companion } from '../platform/db/companions.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { recordAudit, recordAuditAlong, recordAuditWithEvent } from './audit.repo.ts';
import type { AuditEntry, AuditType } from './audit.types.ts';

/** What an audit record says beyond what the Call supplies. */
export interface AuditAbout
  extends Omit<AuditEntry, 'realmId' | 'type' | 'actor' | 'correlationId' | 'orgId' | 'reason'> {
  /** The owning organization; null or absent for realm-wide records. */
  orgId?: string | null;
  reason?: string | null;
}

export interface Recorder {
  /** Writes one audit record now, in the transaction; returns its id. */
  audit(type: AuditType, about: AuditAbout): Promise<string>;
  /** Adds one outbox event now, in the transaction; orgId goes on the envelope. Returns its id. */
  event<T extends EventType>(type: T, data: EventData[T], orgId?: string | null): Promise<string>;
  /** audit, then event, written by one statement (orgId, when given, on both). */
  auditWithEvent<T extends EventType>(
    type: AuditType,
    about: AuditAbout,
    event: { type: T; data: EventData[T] },
  ): Promise<void>;
  /**
   * audit (and event, when given) written by the statement of a change the use case makes anyway:
   * `main`, an insert, update or delete whose returned rows come back, with `parts`, more writes
   * of the change joined to it (platform/db/companions.ts).
   */
  auditAlong<R, T extends EventType = EventType>(
    type: AuditType,
    about: AuditAbout,
    main: Companion,
    event?: { type: T; data: EventData[T] },
    parts?: readonly Companion[],
  ): Promise<R[]>;
}

/** The recorder of a transaction already open, for `*InTx` variants that compose into larger changes. */
export function recorder(tx: Tx, call: Call): Recorder {
  const correlation = call.correlationId ? { correlationId: call.correlationId } : {};
  const entry = (type: AuditType, { orgId, reason, ...about }: AuditAbout): AuditEntry => ({
    ...about,
    realmId: call.realmId,
    type,
    actor: call.actor,
    ...(orgId ? { orgId } : {}),
    ...correlation,
    ...(reason === null || reason === undefined ? {} : { reason }),
  });
  const newEvent = <T extends EventType>(type: T, data: EventData[T], orgId?: string | null) => ({
    realmId: call.realmId,
    type,
    occurredAt: call.now,
    ...(orgId ? { orgId } : {}),
    ...correlation,
    data,
  });
  return {
    audit: (type, about) => recordAudit(tx, entry(type, about), call.now),
    event: (type, data, orgId) => addEvent(tx, newEvent(type, data, orgId)),
    auditWithEvent: (type, about, event) =>
      recordAuditWithEvent(tx, entry(type, about), newEvent(event.type, event.data, about.orgId), call.now),
    auditAlong: (type, about, main, event, parts) =>
      recordAuditAlong(
        tx,
        entry(type, about),
        call.now,
        main,
        event ? newEvent(event.type, event.data, about.orgId) : undefined,
        parts,
      ),
  };
}

/** Runs one change in one transaction, handing it the recorder of its evidence. */
export function inChange<T>(
  db: Db,
  call: Call,
  change: (tx: Tx, record: Recorder) => Promise<T>,
): Promise<T> {
  return db.tx((tx) => change(tx, recorder(tx, call)));
}
