// The process-level net for errors no request or task caught (issue #10). A database fault is
// recoverable: the pool reconnects when the database returns, so the process stays up and keeps
// answering 503. Anything else leaves the process in an unknown state: it is logged as fatal and
// the process exits 1, so its supervisor starts a clean one.
import { isDatabaseFault } from '../platform/db/pg-errors.ts';
import type { Logger } from '../platform/log.ts';
import { throttledWarning } from './throttled-warning.ts';

export function installProcessGuards(log: Logger, exit: (code: number) => void = process.exit): void {
  const warnRecoverable = throttledWarning(log, 'database fault outside any request; the process continues');
  const handle = (origin: 'uncaughtException' | 'unhandledRejection') => (e: unknown) => {
    if (isDatabaseFault(e)) {
      warnRecoverable({ origin, err: String(e) });
      return;
    }
    log.fatal(
      { origin, err: e },
      'fatal error outside any request; exiting so a supervisor restarts the process',
    );
    exit(1);
  };
  process.on('uncaughtException', handle('uncaughtException'));
  process.on('unhandledRejection', handle('unhandledRejection'));
}
