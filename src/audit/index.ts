// The audit context's public surface: writing audit records, and the evidence recorder that writes
// a change's audit records and outbox events, in the caller's transaction; sealing, archive and
// retention rules for the worker.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export { presentAuditEvent } from './audit.present.ts';
export { onSecuritySignal, recordAudit } from './audit.repo.ts';
export { archiveAudit } from './audit-archive.task.ts';
export { type ArchiveReport, verifyArchive } from './audit-archive-verify.ts';
export { type AuditEventFilters, type AuditEventRow, listAuditEvents } from './audit-events.repo.ts';
export { contentHash } from './audit-hash.ts';
export { pruneBatchEvents, retentionCandidates, retentionEvents } from './audit-retention.repo.ts';
export {
  extensionMs,
  isPrunable,
  parseRetentionByCategory,
  type RetentionSettings,
  shortestRetentionMs,
} from './audit-retention.ts';
export { type UnsealedState, unsealedState } from './audit-seal.repo.ts';
export { type IntegrityReport, sealAudit, verifyRecentAudit } from './audit-seal.task.ts';
export { inChange, type Recorder, recorder } from './evidence.ts';
export {
  type ImportedAuditEvent,
  type ImportedAuditEventRow,
  type ImportedEventFilters,
  insertImportedAuditEvents,
  listImportedAuditEvents,
  pruneImportedAuditEvents,
} from './imported-events.repo.ts';
export { activeLegalHolds, type LegalHoldRow } from './legal-holds.repo.ts';
