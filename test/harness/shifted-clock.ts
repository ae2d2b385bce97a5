// Preloaded into a child process (`node --import tsx --import ./test/harness/shifted-clock.ts`):
// the process's clock runs with real time plus an offset that the test moves forward by sending
// SIGUSR2, each signal one minute. Timers keep running in real time; only clock readings move, so
// the child's own scheduling (which reads the clock) sees a minute pass at once. The signal
// listener holds nothing open: a child that would exit without it still exits.
export const SHIFT_STEP_MS = 60_000;

const RealDate = Date;
let offsetMs = 0;

class ShiftedDate extends RealDate {
  constructor(...args: ConstructorParameters<DateConstructor> | []) {
    if (args.length === 0) super(RealDate.now() + offsetMs);
    else super(...(args as ConstructorParameters<DateConstructor>));
  }

  static override now(): number {
    return RealDate.now() + offsetMs;
  }
}

globalThis.Date = ShiftedDate as DateConstructor;

process.on('SIGUSR2', () => {
  offsetMs += SHIFT_STEP_MS;
  process.stderr.write(`shifted clock: +${offsetMs} ms\n`);
});
