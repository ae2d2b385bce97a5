// `proudauth serve` on every core: a primary process forks `server.processes` workers (node:cluster)
// that share the public and internal listeners; connections are spread over them by the primary.
// The primary opens no database connection and serves nothing itself: it restarts a worker that
// dies, passes SIGTERM and SIGINT on (each worker drains on its own), and answers the workers'
// /metrics requests with the group's sums (platform/metrics-cluster.ts). Workers share nothing but
// PostgreSQL; their caches are the short per-process ones every `serve` process has.
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Config } from '../platform/config/settings.ts';
import { serveGroupMetrics } from '../platform/metrics-cluster.ts';

/** How many processes `serve` runs: the setting, one per core for 0, one on the embedded database. */
export function serveProcessCount(config: Config): number {
  if (!config.database.url) return 1; // the embedded database belongs to one process
  return config.server.processes === 0 ? availableParallelism() : config.server.processes;
}

/** This process is one of a group's workers. */
export const isGroupWorker = (): boolean => cluster.isWorker;

// A worker that dies within this long of its start is not restarted at once (a crash loop, e.g. a
// port already taken): the delay doubles up to a minute.
const HEALTHY_AFTER_MS = 10_000;
const MAX_RESTART_DELAY_MS = 60_000;

const say = (line: string) => process.stderr.write(`proudauth serve: ${line}\n`);

// A server allocates short-lived objects on every request: a 32 MiB young generation (V8's
// default is 16) about halves the time it spends collecting them (bench/README.md) and grows only
// under load. Given to the group's processes unless the operator chose a size (docs/scaling.md).
const YOUNG_GENERATION_FLAG = '--max-semi-space-size=32';

/** The Node options of a group's process: the primary's own, with the young generation's size. */
export function workerExecArgv(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const chosen = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) =>
    /^--max-semi-space-size(=|$)/.test(a),
  );
  return chosen ? [...execArgv] : [...execArgv, YOUNG_GENERATION_FLAG];
}

/** Runs the group's primary until every worker has stopped after a signal. */
export function runServeGroup(count: number): void {
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
  serveGroupMetrics();
  let stopping = false;
  let delay = 1000;
  const started = new Map<number, number>();
  const fork = () => {
    const w = cluster.fork();
    started.set(w.id, Date.now());
  };
  cluster.on('exit', (worker, code, signal) => {
    const since = started.get(worker.id) ?? 0;
    started.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    say(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    if (Date.now() - since > HEALTHY_AFTER_MS) delay = 1000;
    setTimeout(fork, delay);
    delay = Math.min(delay * 2, MAX_RESTART_DELAY_MS);
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  for (let i = 0; i < count; i++) fork();
}
