// A warning that repeats during an outage (every broken pooled connection reports once) is logged
// at most once per interval, with the number of repeats it stands for.
import type { Logger } from '../platform/log.ts';

const INTERVAL_MS = 5000;

export function throttledWarning(
  log: Logger,
  message: string,
  now: () => number = Date.now,
): (fields: Record<string, unknown>) => void {
  let last = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (fields) => {
    const t = now();
    if (t - last < INTERVAL_MS) {
      suppressed++;
      return;
    }
    log.warn({ ...fields, ...(suppressed > 0 ? { repeated: suppressed } : {}) }, message);
    last = t;
    suppressed = 0;
  };
}
