// The events context's public surface: adding events to the transactional outbox, the catalog's
// names, and dispatching committed events to their destinations.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export { EVENT_TYPES, isEventType } from './catalog.ts';
export { addEvent, eventInsert, type NewEvent, oldestPendingSeconds } from './outbox.repo.ts';
export {
  cleanupOutbox,
  dispatchOutbox,
  dispatchOutboxTo,
  type OutboxDestination,
  type OutboxDispatchDeps,
  type OutboxEvent,
} from './outbox-dispatch.task.ts';
