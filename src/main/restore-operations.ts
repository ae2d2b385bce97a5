// The operator operations of backup and restore (document 2, "Command-line operator tools":
// revocation-log, restore-begin, restore-reconcile), run like the others of operator-operations.ts:
// on the database identity-cli opens, or by the `proudauth dev` that holds it.
import { boolean, object, optional, string } from '../platform/http/decode.ts';
import { beginRestore, exportLog, reconcileRestore, restoreStatus } from '../restore/restore.service.ts';
import { LogFileError, parseLogFile, readLogSince } from '../restore/revocation-log.ts';
import { CliError } from './cli/cli-error.ts';
import { requireKeyring } from './context.ts';
import { define } from './operator-define.ts';

export const revocationLogExport = define(
  'POST',
  '/operator/revocation-log',
  object({ since: string({ minLength: 1, maxLength: 64 }) }),
  async (ctx, input) => {
    const since = new Date(input.since);
    if (Number.isNaN(since.getTime())) throw new CliError('--since is an RFC 3339 time');
    const records = await exportLog(ctx.db, (tx) => readLogSince(tx, since), since, ctx.clock.now());
    return { since: since.toISOString(), records };
  },
);

export const restoreMarkerStatus = define('GET', '/operator/restore', object({}), (ctx) =>
  restoreStatus(ctx.db),
);

export const restoreBegin = define(
  'POST',
  '/operator/restore/begin',
  object({ by: optional(string({ minLength: 1, maxLength: 100, pattern: /[^\p{Cc}]+/u })) }),
  (ctx, input) => beginRestore(ctx.db, input.by ?? 'identity-cli', ctx.clock.now()),
);

export const restoreReconcile = define(
  'POST',
  '/operator/restore/reconcile',
  object({ log: optional(string()), invalidate_all_sessions: optional(boolean(), false) }),
  async (ctx, input) => {
    if (input.log === undefined && !input.invalidateAllSessions)
      throw new CliError('give --log FILE, --invalidate-all-sessions, or both');
    let records: ReturnType<typeof parseLogFile> = [];
    try {
      records = input.log === undefined ? [] : parseLogFile(input.log);
    } catch (e) {
      if (e instanceof LogFileError) throw new CliError(`${e.message}; nothing was changed`);
      throw e;
    }
    return reconcileRestore(
      ctx.db,
      records,
      { invalidateAllSessions: input.invalidateAllSessions, logLines: records.length },
      { keyring: requireKeyring(ctx), algorithm: ctx.config.keys.signingAlgorithm },
      ctx.clock.now(),
    );
  },
);
