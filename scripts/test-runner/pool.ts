// Runs batches of test files, each batch in a process of its own (test/harness/batch-entry.ts runs
// a batch's files one after another), `concurrency` processes at a time, in the order given. A
// batch's output is held until it ends and then printed whole, so parallel batches never interleave.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface FileResult {
  /** The batch's first file, and how many more it held. */
  file: string;
  files: string[];
  ms: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  counts: Counts;
  /** CPU time of the file's process and the children it waited for, or null where unknown. */
  cpuMs: number | null;
}

export const COUNT_NAMES = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;
export type Counts = Record<(typeof COUNT_NAMES)[number], number>;

export const emptyCounts = (): Counts => ({
  tests: 0,
  suites: 0,
  pass: 0,
  fail: 0,
  cancelled: 0,
  skipped: 0,
  todo: 0,
});

/** The totals node:test's spec and tap reporters print last ("ℹ pass 12", "# pass 12"). */
export function countsOf(output: string): Counts | null {
  const counts = emptyCounts();
  let seen = false;
  for (const m of output.matchAll(/^[ℹ#] (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) {
    counts[m[1] as keyof Counts] = Number(m[2]);
    seen = true;
  }
  return seen ? counts : null;
}

export interface PoolOptions {
  concurrency: number;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** node arguments for one batch (the files' compiled paths last). */
  argsFor(files: string[]): string[];
  onDone(result: FileResult, output: string): void;
}

export interface Pool {
  done: Promise<FileResult[]>;
  /** Ends every running file (the run was interrupted). */
  stop(): void;
}

// Linux adds a child's CPU time (with that of the children it reaped) to the parent's cutime and
// cstime when the parent reaps it, so the growth of those two counters between one file's end and
// the previous one is that file's CPU time (two files ending in the same instant share a figure).
const TICK_MS = 10;
function reapedChildrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
  } catch {
    return null;
  }
}

export function runPool(batches: string[][], opts: PoolOptions): Pool {
  const queue = [...batches];
  const running = new Set<ChildProcess>();
  const results: FileResult[] = [];
  let stopped = false;
  let lastCpu = reapedChildrenCpuMs();

  const runOne = (files: string[]): Promise<void> =>
    new Promise((resolve) => {
      const started = performance.now();
      const child = spawn(process.execPath, opts.argsFor(files), {
        cwd: opts.cwd,
        env: opts.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      running.add(child);
      const chunks: Buffer[] = [];
      child.stdout?.on('data', (b: Buffer) => chunks.push(b));
      child.stderr?.on('data', (b: Buffer) => chunks.push(b));
      let ended = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        // 'error' (could not start) may be followed by 'close'; the file ends once.
        if (ended) return;
        ended = true;
        running.delete(child);
        const output = Buffer.concat(chunks).toString('utf8');
        const cpu = reapedChildrenCpuMs();
        const cpuMs = cpu !== null && lastCpu !== null ? cpu - lastCpu : null;
        lastCpu = cpu;
        const result: FileResult = {
          file: files.length === 1 ? (files[0] as string) : `${files[0]} and ${files.length - 1} more`,
          files,
          ms: performance.now() - started,
          code,
          signal,
          counts: countsOf(output) ?? emptyCounts(),
          cpuMs,
        };
        results.push(result);
        opts.onDone(result, output);
        resolve();
      };
      child.on('error', (e) => {
        chunks.push(Buffer.from(`could not start: ${e.message}\n`));
        finish(null, null);
      });
      child.on('close', finish);
    });

  const worker = async () => {
    for (let batch = queue.shift(); batch !== undefined && !stopped; batch = queue.shift())
      await runOne(batch);
  };
  const done = Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker)).then(() => results);
  return {
    done,
    stop() {
      stopped = true;
      for (const child of running) child.kill('SIGTERM');
    },
  };
}
