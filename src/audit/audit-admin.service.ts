// The audit administration use cases (spec doc 2, Audit endpoints; docs/audit.md): legal holds,
// corrections and application activity. Each is one transaction with its own audit record.
import type { Call } from '../kernel/call.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { AuditCategory } from './audit.types.ts';
import { findAuditEvent } from './audit-events.repo.ts';
import { inChange } from './evidence.ts';
import { insertLegalHold, type LegalHoldRow, releaseLegalHold } from './legal-holds.repo.ts';

export interface NewLegalHold {
  reason: string;
  organizationId: string | null;
  subjectId: string | null;
}

/** No id is checked for existence (spec doc 2, Audit endpoints): a hold may precede its subject. */
export function placeLegalHold(db: Db, call: Call, h: NewLegalHold): Promise<LegalHoldRow> {
  return inChange(db, call, async (tx, record) => {
    const row: LegalHoldRow = {
      realm_id: call.realmId,
      id: newId('alh', call.now.getTime()),
      organization_id: h.organizationId,
      subject_id: h.subjectId,
      reason: h.reason,
      created_by_id: call.actor.id,
      created_at: call.now,
      released_by_id: null,
      released_at: null,
    };
    await insertLegalHold(tx, row);
    // Placement emits no event (spec doc 2, Catalog): the audit record is its evidence.
    await record.audit('audit.legal_hold.placed', {
      category: 'privacy',
      target: { type: 'audit_legal_hold', id: row.id },
      orgId: h.organizationId,
      ...(h.subjectId ? { subject: { type: 'subject', id: h.subjectId } } : {}),
      reason: h.reason,
    });
    return row;
  });
}

/** Release emits only security.alert: the audit record carries a signal, no event of its own. */
export function releaseHold(db: Db, call: Call, id: string): Promise<LegalHoldRow> {
  return inChange(db, call, async (tx, record) => {
    const row = await releaseLegalHold(tx, call.realmId, id, call.actor.id, call.now);
    if (!row) throw problem.notFound('no such active legal hold');
    await record.audit('audit.legal_hold.released', {
      category: 'privacy',
      target: { type: 'audit_legal_hold', id: row.id },
      orgId: row.organization_id,
      ...(row.subject_id ? { subject: { type: 'subject', id: row.subject_id } } : {}),
      signal: 'configuration_change',
    });
    return row;
  });
}

export interface Correction {
  reason: string;
  correction: unknown;
}

/** A new event that names the one it corrects; the corrected event is never edited. */
export function correctAuditEvent(
  db: Db,
  call: Call,
  eventId: string,
  c: Correction,
): Promise<{ event_id: string; corrects_event_id: string }> {
  return inChange(db, call, async (tx, record) => {
    // Only the caller's realm: another realm's event is as unknown as a missing one.
    const original = await findAuditEvent(tx, call.realmId, eventId);
    if (!original) throw problem.notFound('no such audit event');
    const id = await record.audit('audit.event.corrected', {
      // The correction lives as long as what it corrects.
      category: original.category as AuditCategory,
      target: { type: 'audit_event', id: original.id },
      orgId: original.org_id,
      ...(original.subject_type && original.subject_id
        ? { subject: { type: original.subject_type, id: original.subject_id } }
        : {}),
      reason: c.reason,
      correctsEventId: original.id,
      data: c.correction === undefined ? {} : { correction: c.correction },
    });
    return { event_id: id, corrects_event_id: original.id };
  });
}

export interface Activity {
  activity: string;
  outcome: 'success' | 'failure';
  subjectId: string | null;
  targetId: string | null;
  organizationId: string | null;
  data: Record<string, unknown>;
}

/** Application activity reported by a service (POST /activity-events), stored as evidence. */
export function reportActivity(db: Db, call: Call, a: Activity): Promise<{ id: string }> {
  return inChange(db, call, async (_tx, record) => {
    const id = await record.audit('activity.reported', {
      category: 'operations',
      outcome: a.outcome,
      orgId: a.organizationId,
      ...(a.subjectId ? { subject: { type: 'subject', id: a.subjectId } } : {}),
      ...(a.targetId ? { target: { type: 'target', id: a.targetId } } : {}),
      data: { activity: a.activity, ...(Object.keys(a.data).length > 0 ? { details: a.data } : {}) },
    });
    return { id };
  });
}
