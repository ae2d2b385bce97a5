// Wire forms of audit events and legal holds (spec doc 2, Audit records).
import type { AuditEventRow } from './audit-events.repo.ts';
import type { LegalHoldRow } from './legal-holds.repo.ts';

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

export const presentAuditEvent = (e: AuditEventRow) => ({
  id: e.id,
  type: e.type,
  category: e.category,
  outcome: e.outcome,
  occurred_at: iso(e.occurred_at),
  actor: { type: e.actor_type, id: e.actor_id },
  subject: e.subject_id === null ? null : { type: e.subject_type, id: e.subject_id },
  target: e.target_id === null ? null : { type: e.target_type, id: e.target_id },
  organization_id: e.org_id,
  correlation_id: e.correlation_id,
  signal: e.signal,
  reason: e.reason,
  corrects_event_id: e.corrects_event_id,
  data: e.data,
  // Null until the event is sealed into a batch.
  content_hash: e.content_hash,
});

export const presentLegalHold = (h: LegalHoldRow) => ({
  id: h.id,
  organization_id: h.organization_id,
  subject_id: h.subject_id,
  reason: h.reason,
  created_by_id: h.created_by_id,
  created_at: iso(h.created_at),
  released_by_id: h.released_by_id,
  released_at: iso(h.released_at),
});
