// The rules a sealed audit chain keeps (docs/audit.md, Sealing and "Verifying an archive"), one
// place for both readers of it: the worker's hourly check of the newest batches in the database
// (audit-seal.task.ts) and `identity-cli audit verify --archive` over the archive files
// (audit-archive-verify.ts). Pure: no database, no files.
import { batchHash, eventsHash } from './audit-hash.ts';

/** A batch as either reader has it. */
export interface ChainBatch {
  seq: number;
  previous_hash: string | null;
  events_hash: string;
  event_count: number;
  batch_hash: string;
}

export type ChainProblemKind =
  | 'batch_hash_mismatch'
  | 'batches_missing'
  | 'previous_hash_mismatch'
  | 'sequence_out_of_order'
  | 'events_missing'
  | 'unexpected_events'
  | 'event_changed'
  | 'events_hash_mismatch';

export interface ChainProblem {
  kind: ChainProblemKind;
  detail: string;
}

const problem = (kind: ChainProblemKind, detail: string): ChainProblem => ({ kind, detail });

/**
 * What is wrong with a batch's own hash and its link to the batch read before it, or null.
 * `previous` null means no batch comes before it: it must then be the chain's first (seq 1, no
 * previous hash), so batches deleted from the start of the chain are a gap like any other.
 */
export function linkProblem(b: ChainBatch, previous: ChainBatch | null): ChainProblem | null {
  const link = {
    seq: b.seq,
    previousHash: b.previous_hash,
    eventsHash: b.events_hash,
    eventCount: b.event_count,
  };
  if (batchHash(link) !== b.batch_hash)
    return problem('batch_hash_mismatch', `batch ${b.seq}: its hash does not match its fields`);
  const expectedSeq = previous === null ? 1 : previous.seq + 1;
  if (b.seq < expectedSeq)
    return problem('sequence_out_of_order', `batch ${b.seq} comes after batch ${previous?.seq ?? 0}`);
  if (b.seq > expectedSeq)
    return problem(
      'batches_missing',
      `batches ${expectedSeq}..${b.seq - 1} are missing before batch ${b.seq}`,
    );
  if (b.previous_hash !== (previous?.batch_hash ?? null))
    return problem(
      'previous_hash_mismatch',
      `batch ${b.seq}: its previous hash is not the hash of batch ${expectedSeq - 1}`,
    );
  return null;
}

/** An event of a batch: the content hash stored with it and the one its fields hash to now. */
export interface ChainEvent {
  id: string;
  storedHash: string | null;
  computedHash: string;
}

/**
 * What is wrong with a batch's events, or null. `events` are in sealing order ((occurred_at, id));
 * `pruned` counts the events retention deleted, whose absence is expected and leaves the events
 * hash unverifiable.
 */
export function eventsProblem(b: ChainBatch, events: readonly ChainEvent[], pruned = 0): ChainProblem | null {
  const expected = b.event_count - pruned;
  if (events.length < expected)
    return problem(
      'events_missing',
      `batch ${b.seq}: ${expected - events.length} of ${expected} events are missing`,
    );
  if (events.length > expected)
    return problem(
      'unexpected_events',
      `batch ${b.seq}: ${events.length - expected} events more than it sealed`,
    );
  const changed = events.find((e) => e.storedHash !== e.computedHash);
  if (changed) return problem('event_changed', `batch ${b.seq}: event ${changed.id} changed after sealing`);
  if (pruned === 0 && eventsHash(events.map((e) => e.computedHash)) !== b.events_hash)
    return problem(
      'events_hash_mismatch',
      `batch ${b.seq}: its events hash does not match its events or their order`,
    );
  return null;
}
