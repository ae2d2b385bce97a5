// Periodic tasks across any number of worker processes. A task runs where its lease is taken; the
// lease lasts one interval, so the task runs about once per interval in the whole deployment.
import { randomUUID } from 'node:crypto';
import type { Task, TaskReport } from '../../kernel/task.ts';
import type { Db } from '../../platform/db/db.ts';
import type { Logger } from '../../platform/log.ts';

export const WORKER_ID = `wkr-${randomUUID()}`;

/** Takes or renews the lease; true when this worker holds it until `until`. */
export async function takeLease(
  db: Db,
  name: string,
  holder: string,
  now: Date,
  until: Date,
): Promise<boolean> {
  const r = await db.query(
    `insert into worker_leases (name, holder, locked_until) values ($1, $2, $3)
     on conflict (name) do update set holder = excluded.holder, locked_until = excluded.locked_until
       where worker_leases.locked_until <= $4 or worker_leases.holder = excluded.holder
     returning holder`,
    [name, holder, until, now],
  );
  return r.rowCount === 1;
}

export interface SchedulerHooks {
  onRun(task: string, outcome: 'success' | 'failure' | 'skipped'): void;
}

export class Scheduler<D> {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private stopped = false;

  private readonly db: Db;
  private readonly deps: D;
  private readonly tasks: readonly Task<D>[];
  private readonly clock: () => Date;
  private readonly log: Logger;
  private readonly hooks: SchedulerHooks;
  private readonly holder: string;

  constructor(
    db: Db,
    deps: D,
    tasks: readonly Task<D>[],
    clock: () => Date,
    log: Logger,
    hooks: SchedulerHooks,
    // Lease holder name; one per process in production, distinct ones let tests play two workers.
    holder: string = WORKER_ID,
  ) {
    this.db = db;
    this.deps = deps;
    this.tasks = tasks;
    this.clock = clock;
    this.log = log;
    this.hooks = hooks;
    this.holder = holder;
  }

  start(): void {
    for (const task of this.tasks) {
      const tick = () => {
        if (this.stopped) return;
        const p = this.runOnce(task).finally(() => this.running.delete(p));
        this.running.add(p);
      };
      tick();
      const t = setInterval(tick, task.intervalMs);
      t.unref();
      this.timers.push(t);
    }
  }

  /** Runs one task now if its lease can be taken; used by the ticker and by tests. */
  async runOnce(task: Task<D>): Promise<TaskReport | null> {
    const now = this.clock();
    try {
      if (
        !(await takeLease(this.db, task.name, this.holder, now, new Date(now.getTime() + task.intervalMs)))
      ) {
        this.hooks.onRun(task.name, 'skipped');
        return null;
      }
      const report = await task.run(this.deps, now);
      this.hooks.onRun(task.name, 'success');
      if (Object.values(report).some((n) => n > 0)) this.log.info({ task: task.name, ...report }, 'task ran');
      return report;
    } catch (e) {
      this.hooks.onRun(task.name, 'failure');
      this.log.error({ task: task.name, err: e }, 'task failed');
      return null;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    await Promise.allSettled([...this.running]);
  }
}
