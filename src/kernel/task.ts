// The contract of a periodic worker task (document 2, worker tasks). Tasks sit beside the context
// that owns their tables; the scheduler in main/worker runs them under leases.

/** Counters a run reports (rows deleted, events dispatched, ...), for logs and metrics. */
export interface TaskReport {
  [counter: string]: number;
}

export interface Task<D> {
  name: string;
  intervalMs: number;
  /**
   * false: every worker runs the task at each tick (its items carry leases of their own, as jobs
   * do); otherwise one worker in the deployment holds the task's lease for an interval.
   */
  lease?: false;
  run(deps: D, now: Date): Promise<TaskReport>;
}
