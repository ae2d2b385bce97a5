// The hash chain of sealed audit evidence (docs/audit.md, "What is hashed", byte by byte). Each
// event's content hash is SHA-256 over the RFC 8785 (JCS) form of its stored fields; a batch hash
// covers its position, the previous batch's hash and the content hashes of its events, so an
// edited, removed or inserted event or batch breaks the chain. Pure: the worker's check and
// `identity-cli audit verify --archive` (no database) both use it.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** An audit_events row as read back for hashing. */
export interface HashedEventRow {
  id: string;
  realm_id: string | null;
  occurred_at: Date;
  type: string;
  category: string;
  outcome: string;
  actor_type: string;
  actor_id: string | null;
  subject_type: string | null;
  subject_id: string | null;
  target_type: string | null;
  target_id: string | null;
  org_id: string | null;
  correlation_id: string | null;
  signal: string | null;
  reason: string | null;
  corrects_event_id: string | null;
  data: unknown;
}

/** The RFC 8785 form of a JSON value; throws on what JSON cannot hold (NaN, lone surrogates). */
export function jcs(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('not a JSON value');
  return text;
}

/** The members a content hash covers, as hashed: `occurred_at` in RFC 3339 UTC with milliseconds. */
function hashedContent(e: HashedEventRow): Record<string, unknown> {
  return {
    id: e.id,
    realm_id: e.realm_id,
    occurred_at: new Date(e.occurred_at).toISOString(),
    type: e.type,
    category: e.category,
    outcome: e.outcome,
    actor_type: e.actor_type,
    actor_id: e.actor_id,
    subject_type: e.subject_type,
    subject_id: e.subject_id,
    target_type: e.target_type,
    target_id: e.target_id,
    org_id: e.org_id,
    correlation_id: e.correlation_id,
    signal: e.signal,
    reason: e.reason,
    corrects_event_id: e.corrects_event_id,
    data: e.data,
  };
}

export const contentHash = (e: HashedEventRow): string => sha256(jcs(hashedContent(e)));

export const eventsHash = (contentHashes: readonly string[]): string => sha256(contentHashes.join('\n'));

export interface BatchLink {
  seq: number;
  previousHash: string | null;
  eventsHash: string;
  eventCount: number;
}

export const batchHash = (b: BatchLink): string =>
  sha256(`proudauth-audit-batch/1\n${b.seq}\n${b.previousHash ?? ''}\n${b.eventsHash}\n${b.eventCount}`);
