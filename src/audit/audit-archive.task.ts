// Worker task audit.archive (docs/audit.md, Archive): one write-once NDJSON file per sealed batch
// under privacy.audit_archive_dir. Retention prunes only batches archived here when the directory
// is set, so the file is the evidence that outlives the rows.
import { createHash } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { type BatchRow, batchEvents, markArchived, unarchivedBatches } from './audit-seal.repo.ts';

const ARCHIVE_BATCHES_PER_RUN = 100;

export interface ArchiveDeps {
  db: Db;
  auditArchiveDir: string | null;
}

export const archiveFileName = (b: Pick<BatchRow, 'seq' | 'id'>): string =>
  `audit-${String(b.seq).padStart(12, '0')}-${b.id}.ndjson`;

const iso = (d: Date | null) => (d === null ? null : new Date(d).toISOString());

async function archiveText(db: Db, b: BatchRow): Promise<string> {
  const header = {
    record: 'batch',
    id: b.id,
    seq: Number(b.seq),
    sealed_at: iso(b.sealed_at),
    first_occurred_at: iso(b.first_occurred_at),
    last_occurred_at: iso(b.last_occurred_at),
    event_count: b.event_count,
    events_hash: b.events_hash,
    previous_hash: b.previous_hash,
    batch_hash: b.batch_hash,
  };
  const lines = [JSON.stringify(header)];
  for (const e of (await batchEvents(db, b.id)).rows) {
    lines.push(JSON.stringify({ record: 'event', ...e, occurred_at: iso(e.occurred_at) }));
  }
  return `${lines.join('\n')}\n`;
}

const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');

/**
 * Writes the file once: a temporary file is linked to the final name, which fails when the name
 * exists. An existing file from a run that stopped before marking the batch must hold the same
 * bytes; anything else is left alone and reported.
 */
async function writeOnce(dir: string, name: string, text: string): Promise<void> {
  const final = join(dir, name);
  const temp = join(dir, `.${name}.${process.pid}.tmp`);
  await writeFile(temp, text, { flag: 'w', mode: 0o440 });
  try {
    await link(temp, final);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (sha(await readFile(final)) !== sha(text))
      throw new Error(`archive file ${name} exists with other content`);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

export async function archiveAudit(deps: ArchiveDeps, now: Date): Promise<TaskReport> {
  const dir = deps.auditArchiveDir;
  if (!dir) return { archived: 0 };
  await mkdir(dir, { recursive: true, mode: 0o750 });
  let archived = 0;
  for (const b of (await unarchivedBatches(deps.db, ARCHIVE_BATCHES_PER_RUN)).rows) {
    await writeOnce(dir, archiveFileName(b), await archiveText(deps.db, b));
    await markArchived(deps.db, b.id, now);
    archived += 1;
  }
  return { archived };
}
