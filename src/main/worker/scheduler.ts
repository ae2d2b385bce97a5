// Periodic tasks across any number of worker processes. A task runs where its lease is taken; the
// lease lasts one interval, so the task runs about once per interval in the whole deployment.
//
// Timing reads the injected clock: one heartbeat looks at the clock a few times a second and starts
// each task whose interval has passed since its last start, so a test that moves the clock moves the
// schedule with it. The heartbeat is a referenced timer on purpose: a started scheduler is what keeps
// `proudauth worker` alive (it may run without any listener), until stop() clears it.
import { randomUUID } from 'node:crypto';
import { workerRun } from '../../kernel/call.ts';
import type { Task, TaskReport } from '../../kernel/task.ts';
import type { Db } from '../../platform/db/db.ts';
import { isDatabaseFault } from '../../platform/db/pg-errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Logger } from '../../platform/log.ts';
import { inRootSpan } from '../../platform/tracing.ts';

/**
 * One task run, under its own run id: the correlation id of the evidence the run writes, and the
 * root span of the run's trace when tracing is on.
 */
const inRun = (task: string, run: () => Promise<TaskReport>, now: Date): Promise<TaskReport> => {
  const runId = newId('run', now.getTime());
  return workerRun.run({ runId }, () =>
    inRootSpan(`task ${task}`, { 'proudauth.task': task, 'proudauth.run_id': runId }, run),
  );
};

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

/**
 * Gives a lease back after a failed run (best effort: the database may still be down, and then the
 * lease simply runs out after one interval), so any worker may run the task again at its next tick.
 */
export async function releaseLease(db: Db, name: string, holder: string, now: Date): Promise<void> {
  await db.query('update worker_leases set locked_until = $3 where name = $1 and holder = $2', [
    name,
    holder,
    now,
  ]);
}

export interface SchedulerHooks {
  onRun(task: string, outcome: 'success' | 'failure' | 'skipped'): void;
  /**
   * Asked before due tasks start: why this worker takes no work now (the restore marker), or null.
   * A failing answer (the database is down) lets the tasks run and meet the fault themselves.
   */
  refusesWork?(): Promise<string | null>;
}

/** How often the heartbeat reads the clock: a quarter of the shortest interval, within 50 ms..1 s. */
export function heartbeatMs(intervals: readonly number[]): number {
  const shortest = Math.min(4000, ...intervals);
  return Math.max(50, Math.floor(shortest / 4));
}

/**
 * Whether a task last started at `lastStart` is due at `now`. A clock set back (a corrected system
 * clock) makes it due rather than silent for as long as the clock went back.
 */
export function isDue(lastStart: number | undefined, intervalMs: number, now: number): boolean {
  return lastStart === undefined || now < lastStart || now >= lastStart + intervalMs;
}

export class Scheduler<D> {
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly running = new Set<Promise<unknown>>();
  /** Tasks with a run in progress in this process: a slow database must not stack up runs. */
  private readonly busy = new Set<string>();
  /** Clock reading (ms) at each task's last start in this process. */
  private readonly lastStart = new Map<string, number>();
  /** A tick deciding what to start; the next heartbeat waits for it rather than decide twice. */
  private deciding = false;
  /** Why work is refused now (logged once when it starts and once when it ends), or null. */
  private refusal: string | null = null;
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

  /** Runs every task now and then each one whenever its interval has passed, until stop(). */
  start(): void {
    if (this.heartbeat || this.stopped) return;
    void this.tick();
    this.heartbeat = setInterval(() => void this.tick(), heartbeatMs(this.tasks.map((t) => t.intervalMs)));
  }

  /**
   * Starts each due task that is not already running here (what every heartbeat does), unless work
   * is refused now. The answer settles when the runs it started have ended, so tests can drive the
   * schedule by hand.
   */
  async tick(): Promise<void> {
    if (this.stopped || this.deciding) return;
    this.deciding = true;
    let started: Promise<unknown>[];
    try {
      started = await this.startDue();
    } finally {
      this.deciding = false;
    }
    await Promise.allSettled(started);
  }

  private async startDue(): Promise<Promise<unknown>[]> {
    const dueAt = (now: number) =>
      this.tasks.filter(
        (t) => !this.busy.has(t.name) && isDue(this.lastStart.get(t.name), t.intervalMs, now),
      );
    if (dueAt(this.clock().getTime()).length === 0) return [];
    if (await this.workRefused()) return [];
    const now = this.clock().getTime();
    const started: Promise<unknown>[] = [];
    for (const task of dueAt(now)) {
      if (this.stopped) break;
      this.lastStart.set(task.name, now);
      this.busy.add(task.name);
      const p = this.runOnce(task).finally(() => {
        this.running.delete(p);
        this.busy.delete(task.name);
      });
      this.running.add(p);
      started.push(p);
    }
    return started;
  }

  /** Asks the hook; logs when work stops being refused and when it is taken again. */
  private async workRefused(): Promise<boolean> {
    const reason = this.hooks.refusesWork ? await this.hooks.refusesWork().catch(() => null) : null;
    if (reason && reason !== this.refusal) this.log.warn({ reason }, 'worker takes no work');
    if (!reason && this.refusal) this.log.info({ reason: this.refusal }, 'worker takes work again');
    this.refusal = reason;
    return reason !== null;
  }

  /**
   * Runs one task now if its lease can be taken; used by the ticker and by tests. Never rejects: a
   * failed run (the database gone mid-task included) is counted and logged, its lease given back,
   * and the task runs again at a later tick. Each item a task handles commits in its own
   * transaction, so an interrupted run leaves items either done or untouched.
   */
  async runOnce(task: Task<D>): Promise<TaskReport | null> {
    const now = this.clock();
    let leased = false;
    try {
      if (task.lease === false) {
        const report = await inRun(task.name, () => task.run(this.deps, now), now);
        this.hooks.onRun(task.name, 'success');
        if (Object.values(report).some((n) => n > 0))
          this.log.info({ task: task.name, ...report }, 'task ran');
        return report;
      }
      leased = await takeLease(
        this.db,
        task.name,
        this.holder,
        now,
        new Date(now.getTime() + task.intervalMs),
      );
      if (!leased) {
        this.hooks.onRun(task.name, 'skipped');
        return null;
      }
      const report = await inRun(task.name, () => task.run(this.deps, now), now);
      this.hooks.onRun(task.name, 'success');
      if (Object.values(report).some((n) => n > 0)) this.log.info({ task: task.name, ...report }, 'task ran');
      return report;
    } catch (e) {
      this.hooks.onRun(task.name, 'failure');
      if (isDatabaseFault(e))
        this.log.warn(
          { task: task.name, err: String(e) },
          'task interrupted by a database fault; it runs again later',
        );
      else this.log.error({ task: task.name, err: e }, 'task failed');
      if (leased) await releaseLease(this.db, task.name, this.holder, this.clock()).catch(() => {});
      return null;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await Promise.allSettled([...this.running]);
  }
}
