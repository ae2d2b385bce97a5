// Groups the test files into batches that each run in one process (test/harness/batch-entry.ts).
// A process of its own cost every file about a second and a half of CPU before its first test
// (starting Node.js, loading the application and the embedded database's code); a batch pays it
// once. Batches are cut small enough that the workers still share the run evenly at the end.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A test file that must not share its process writes this marker in a comment, with the reason. */
export const OWN_PROCESS_MARKER = 'test-runner: own-process';

export interface BatchOptions {
  root: string;
  concurrency: number;
  /** At most this many files in one process; 1 runs every file alone. */
  maxFiles: number;
}

/**
 * `order` is longest first and `estimate` gives each file's expected duration (any unit). Each
 * batch is filled in that order until it holds about a twelfth of one worker's share of the run,
 * so a long file stays alone and short ones gather; the batches come out longest first too.
 */
export function batchesOf(order: string[], estimate: Map<string, number>, opts: BatchOptions): string[][] {
  const total = order.reduce((s, f) => s + (estimate.get(f) ?? 0), 0);
  const budget = total / Math.max(1, opts.concurrency) / 12;
  const batches: { files: string[]; sum: number }[] = [];
  let open: { files: string[]; sum: number } | null = null;
  for (const file of order) {
    const cost = estimate.get(file) ?? 0;
    if (opts.maxFiles <= 1 || cost >= budget || ownsProcess(opts.root, file)) {
      batches.push({ files: [file], sum: cost });
      continue;
    }
    if (!open || open.sum + cost > budget || open.files.length >= opts.maxFiles) {
      open = { files: [], sum: 0 };
      batches.push(open);
    }
    open.files.push(file);
    open.sum += cost;
  }
  return batches.sort((a, b) => b.sum - a.sum).map((b) => b.files);
}

function ownsProcess(root: string, file: string): boolean {
  return readFileSync(join(root, file), 'utf8').includes(OWN_PROCESS_MARKER);
}

/**
 * Each file's wall-clock time inside a batch, from the spec reporter's line that ends the file's
 * suite ("✔ test/x.test.ts (1234.5ms)" or "✖ ..."), and the files whose suite failed.
 */
export function fileOutcomes(output: string): { ms: Map<string, number>; failed: Set<string> } {
  const ms = new Map<string, number>();
  const failed = new Set<string>();
  for (const m of output.matchAll(/^([✔✖]) (\S+\.test\.ts) \(([\d.]+)ms\)$/gm)) {
    const file = m[2] as string;
    if (ms.has(file)) continue;
    ms.set(file, Number(m[3]));
    if (m[1] === '✖') failed.add(file);
  }
  return { ms, failed };
}
