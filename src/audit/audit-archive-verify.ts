// Verifying an audit archive without the database (docs/audit.md, "Verifying an archive"): the
// files task audit.archive writes, read one at a time. Every event's content hash, every batch's
// events hash and batch hash, and the chain from seq 1 across files are checked with the same
// rules as the worker's check (audit-chain.ts), so an edited line, a deleted or renamed file and
// reordered lines all show up. Nothing here needs a key: the chain is plain SHA-256.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChainBatch, type ChainEvent, eventsProblem, linkProblem } from './audit-chain.ts';
import { contentHash, type HashedEventRow } from './audit-hash.ts';

const FILE_NAME = /^audit-(\d{12})-(aub_[0-9a-z]{26})\.ndjson$/;
const HASH = /^[0-9a-f]{64}$/;

export interface ArchiveProblem {
  kind: string;
  file: string | null;
  seq: number | null;
  detail: string;
}

export interface ArchiveReport {
  ok: boolean;
  archive: string;
  files: number;
  events: number;
  first_seq: number | null;
  last_seq: number | null;
  /** The head of the chain: compare it with the database's, or with a copy kept elsewhere. */
  last_batch_hash: string | null;
  problems: ArchiveProblem[];
}

interface ArchivedBatch extends ChainBatch {
  id: string;
}

type Json = Record<string, unknown>;

/** The archive's batch files by the name audit.archive gives them, lowest seq first. */
async function archiveFiles(dir: string): Promise<{ name: string; seq: number }[]> {
  return (await readdir(dir))
    .flatMap((name) => {
      const m = FILE_NAME.exec(name);
      return m ? [{ name, seq: Number(m[1]) }] : [];
    })
    .sort((a, b) => a.seq - b.seq || (a.name < b.name ? -1 : 1));
}

/** The batch a file's first line describes, or why it does not describe one. */
function batchHeader(line: Json | undefined, name: string): ArchivedBatch | string {
  const m = FILE_NAME.exec(name);
  if (!line || line.record !== 'batch') return 'the first line is not a batch';
  const { id, seq, previous_hash: prev, events_hash: events, event_count: count, batch_hash: hash } = line;
  if (typeof id !== 'string' || id !== m?.[2]) return 'the batch id is not the one in the file name';
  if (!Number.isSafeInteger(seq) || seq !== Number(m[1]))
    return 'the batch seq is not the one in the file name';
  if (typeof events !== 'string' || !HASH.test(events)) return 'events_hash is not a SHA-256 hex digest';
  if (typeof hash !== 'string' || !HASH.test(hash)) return 'batch_hash is not a SHA-256 hex digest';
  if (prev !== null && (typeof prev !== 'string' || !HASH.test(prev)))
    return 'previous_hash is neither null nor a SHA-256 hex digest';
  if (!Number.isSafeInteger(count) || (count as number) < 1) return 'event_count is not a positive integer';
  return {
    id,
    seq: seq as number,
    previous_hash: prev,
    events_hash: events,
    event_count: count as number,
    batch_hash: hash,
  };
}

function hashOf(line: Json): string {
  try {
    return contentHash(line as unknown as HashedEventRow);
  } catch {
    return 'unhashable'; // e.g. an occurred_at that is not a date
  }
}

/** One file: its batch and events, or why it cannot be read as one. */
async function readBatchFile(
  dir: string,
  name: string,
): Promise<{ batch: ArchivedBatch; events: ChainEvent[] } | string> {
  const lines: Json[] = [];
  for (const text of (await readFile(join(dir, name), 'utf8')).split('\n')) {
    if (text === '') continue;
    try {
      const value = JSON.parse(text) as unknown;
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return 'a line is not an object';
      lines.push(value as Json);
    } catch {
      return 'a line is not JSON';
    }
  }
  const batch = batchHeader(lines[0], name);
  if (typeof batch === 'string') return batch;
  const events: ChainEvent[] = [];
  for (const line of lines.slice(1)) {
    if (line.record !== 'event' || line.batch_id !== batch.id) return 'a line is not an event of this batch';
    events.push({
      id: String(line.id),
      storedHash: typeof line.content_hash === 'string' ? line.content_hash : null,
      computedHash: hashOf(line),
    });
  }
  return { batch, events };
}

/** Verifies every file of the archive in `dir` and the chain across them. */
export async function verifyArchive(dir: string): Promise<ArchiveReport> {
  const files = await archiveFiles(dir);
  const problems: ArchiveProblem[] = [];
  const note = (kind: string, file: string | null, seq: number | null, detail: string) =>
    problems.push({ kind, file, seq, detail });
  let previous: ChainBatch | null = null;
  let events = 0;
  for (const { name, seq } of files) {
    const read = await readBatchFile(dir, name);
    if (typeof read === 'string') {
      note('malformed_file', name, seq, read);
      // The batch is there but unreadable: the next one is checked against its seq only, so the
      // report says "malformed", not also "missing".
      previous = { seq, previous_hash: null, events_hash: '', event_count: 0, batch_hash: '' };
      continue;
    }
    events += read.events.length;
    if (previous?.seq === read.batch.seq) {
      note('duplicate_seq', name, seq, `another file also holds batch ${seq}`);
      continue;
    }
    const link = linkProblem(read.batch, previous);
    const unreadableBefore = previous?.batch_hash === '' && link?.kind === 'previous_hash_mismatch';
    for (const p of [unreadableBefore ? null : link, eventsProblem(read.batch, read.events)])
      if (p) note(p.kind, name, seq, p.detail);
    previous = read.batch;
  }
  if (files.length === 0) note('empty_archive', null, null, `no audit archive files in ${dir}`);
  return {
    ok: problems.length === 0,
    archive: dir,
    files: files.length,
    events,
    first_seq: files[0]?.seq ?? null,
    last_seq: files.at(-1)?.seq ?? null,
    last_batch_hash: previous?.batch_hash || null,
    problems,
  };
}

/** The newest batch the archive holds (seq and hash), or null when it holds none readable. */
export async function newestArchivedBatch(dir: string): Promise<ArchivedBatch | null> {
  const files = await archiveFiles(dir);
  for (const { name } of files.reverse()) {
    const first = (await readFile(join(dir, name), 'utf8')).split('\n', 1)[0] ?? '';
    try {
      const batch = batchHeader(JSON.parse(first) as Json, name);
      if (typeof batch !== 'string') return batch;
    } catch {
      // an unreadable newest file: the archive check reports it; look at the one before
    }
  }
  return null;
}
