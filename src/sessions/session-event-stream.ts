// Reading the session-event stream (document 1, realm API table and Limits; docs/resource-servers.md):
// a page of at most 500 events after the caller's position, waiting up to the asked time for the
// first one to commit. Waiting costs no statement: the process's one LISTEN (NotificationHub) wakes
// the request when a revocation of its realm commits. A fault of that connection ends the wait
// with the fault (503), so a waiting verifier never believes an outage is a quiet stream.

import type { Db } from '../platform/db/db.ts';
import type { NotificationHub } from '../platform/db/notification-hub.ts';
import { Problem } from '../platform/http/problem.ts';
import { readSessionEvents, type SessionEventRow, streamBounds } from './session-events.repo.ts';

/** Document 1, realm API table: a page holds up to 500 events; a shorter one means caught up. */
export const PAGE_SIZE = 500;

/** The channel migrations/0036_session_events.sql notifies, with the realm id as payload. */
export const SESSION_EVENTS_CHANNEL = 'proudauth_session_events';

export interface StreamDeps {
  db: Db;
  hub: NotificationHub;
}

export interface StreamRead {
  rows: SessionEventRow[];
  /** The position to continue after. */
  position: string;
}

const cursorExpired = () =>
  new Problem(410, 'cursor_expired', 'the events after this cursor were pruned; read again without a cursor');

export async function readStream(
  deps: StreamDeps,
  realmId: string,
  after: string | null,
  waitMs: number,
  signal: AbortSignal,
): Promise<StreamRead> {
  const bounds = await streamBounds(deps.db, realmId);
  // A cursor below the pruned horizon may have missed events; one above every position handed out
  // comes from another database (a restored backup numbers again from its own past).
  if (after !== null && (BigInt(after) < BigInt(bounds.prunedThrough) || BigInt(after) > BigInt(bounds.head)))
    throw cursorExpired();
  // Without a cursor the stream starts at the oldest event kept. An empty page never moves the
  // position past events that may still commit (only the pruned horizon is safe to skip to).
  const from = after ?? '0';
  const floor = BigInt(from) > BigInt(bounds.prunedThrough) ? from : bounds.prunedThrough;
  const read = async (): Promise<StreamRead | null> => {
    const rows = await readSessionEvents(deps.db, realmId, from, PAGE_SIZE);
    const last = rows.at(-1);
    return last ? { rows, position: last.seq } : null;
  };
  const empty: StreamRead = { rows: [], position: floor };
  const first = await read();
  if (first || waitMs <= 0) return first ?? empty;

  const deadline = performance.now() + waitMs;
  const watch = await deps.hub.watch(realmId);
  try {
    // Read again now that notifications are heard: an event committed before LISTEN took effect
    // would otherwise wait unnoticed until the deadline.
    for (;;) {
      const page = await read();
      if (page) return page;
      const woke = await watch.next(deadline - performance.now(), signal);
      if (woke !== 'notified') return empty;
    }
  } finally {
    watch.end();
  }
}
