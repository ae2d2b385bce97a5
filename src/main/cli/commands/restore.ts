// identity-cli revocation-log, restore-begin and restore-reconcile (docs/restore.md): shipping the
// revocation log out of the database, and re-applying it over a restored backup.
import { appendFileSync, chmodSync, closeSync, openSync, readFileSync } from 'node:fs';
import type { LogRecord } from '../../../restore/revocation-log.ts';
import {
  restoreBegin as beginOp,
  restoreReconcile as reconcileOp,
  restoreMarkerStatus,
  revocationLogExport,
} from '../../restore-operations.ts';
import { CONFIG_FLAG, parseFlags } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { cliPath } from '../cli-io.ts';
import { runOperatorOperation } from '../operator-client.ts';

const DAY_MS = 24 * 3_600_000;

export async function revocationLog(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    ...CONFIG_FLAG,
    since: { type: 'string' },
    out: { type: 'string' },
  });
  if (rest.length > 0 || typeof flags.out !== 'string' || flags.out === '')
    throw new CliError('usage: identity-cli revocation-log [--since TIME] --out FILE');
  const since = (flags.since as string | undefined) ?? new Date(Date.now() - DAY_MS).toISOString();
  // The audit record commits before anything is written: no audit, no export (exit 1).
  const result = (await runOperatorOperation(
    flags,
    revocationLogExport,
    { since },
    {
      flagNames: { since: '--since' },
    },
  )) as { since: string; records: LogRecord[] };
  const out = cliPath(flags.out);
  // Created 0600 and kept so: the file is appended to on every run.
  closeSync(openSync(out, 'a', 0o600));
  chmodSync(out, 0o600);
  if (result.records.length > 0)
    appendFileSync(out, result.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return { out, since: result.since, records: result.records.length };
}

export async function restoreBegin(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    ...CONFIG_FLAG,
    status: { type: 'bool' },
    by: { type: 'string' },
  });
  if (rest.length > 0) throw new CliError('usage: identity-cli restore-begin [--status]');
  if (flags.status) return runOperatorOperation(flags, restoreMarkerStatus, {});
  return runOperatorOperation(flags, beginOp, flags.by === undefined ? {} : { by: flags.by });
}

export async function restoreReconcile(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    ...CONFIG_FLAG,
    log: { type: 'string' },
    'invalidate-all-sessions': { type: 'bool' },
  });
  if (rest.length > 0)
    throw new CliError('usage: identity-cli restore-reconcile --log FILE [--invalidate-all-sessions]');
  const input: Record<string, unknown> = {
    invalidate_all_sessions: flags['invalidate-all-sessions'] === true,
  };
  if (typeof flags.log === 'string') {
    try {
      input.log = readFileSync(cliPath(flags.log), 'utf8');
    } catch (e) {
      throw new CliError(`--log ${flags.log}: ${(e as Error).message}`);
    }
  }
  return runOperatorOperation(flags, reconcileOp, input, {
    flagNames: { log: '--log', invalidate_all_sessions: '--invalidate-all-sessions' },
  });
}
