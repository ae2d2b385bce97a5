// How long each test file took in earlier runs, per database kind, so the next run can start the
// longest files first: a long file started last would leave the other workers idle at the end.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type DatabaseKind = 'postgres' | 'pglite';
type Table = Record<string, number>;
interface TimingFile {
  version: 1;
  runs: Partial<Record<DatabaseKind, Table>>;
}

export function readTimings(file: string, kind: DatabaseKind): Table {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as TimingFile;
    return parsed.version === 1 ? (parsed.runs[kind] ?? {}) : {};
  } catch {
    return {};
  }
}

/** Records this run's durations; files not run this time (a filtered run) keep their old figure. */
export function writeTimings(file: string, kind: DatabaseKind, durations: Table): void {
  let runs: TimingFile['runs'] = {};
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as TimingFile;
    if (parsed.version === 1) runs = parsed.runs;
  } catch {}
  runs[kind] = { ...(runs[kind] ?? {}), ...durations };
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ version: 1, runs }, null, 1)}\n`);
  renameSync(tmp, file);
}

/**
 * Longest first. A file without a recorded duration is estimated from its size at the rate the
 * recorded files ran (or ordered by size alone when nothing is recorded yet).
 */
export function longestFirst(
  root: string,
  files: string[],
  known: Table,
): { order: string[]; estimate: Map<string, number> } {
  const size = (f: string) => statSync(join(root, f)).size;
  const recorded = files.filter((f) => known[f] !== undefined);
  const msPerByte =
    recorded.length > 0
      ? recorded.reduce((s, f) => s + (known[f] ?? 0), 0) / recorded.reduce((s, f) => s + size(f), 0)
      : 1;
  const estimate = new Map(files.map((f) => [f, known[f] ?? size(f) * msPerByte]));
  const order = [...files].sort(
    (a, b) => (estimate.get(b) ?? 0) - (estimate.get(a) ?? 0) || a.localeCompare(b),
  );
  return { order, estimate };
}
