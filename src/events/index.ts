// The events context's public surface: adding events to the transactional outbox.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export { addEvent, oldestPendingSeconds } from './outbox.repo.ts';
