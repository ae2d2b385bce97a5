// The audit context's public surface: writing audit records, and the evidence recorder that writes
// a change's audit records and outbox events, in the caller's transaction.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export { recordAudit } from './audit.repo.ts';
export { inChange, type Recorder, recorder } from './evidence.ts';
