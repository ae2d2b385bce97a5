// Runs an operator operation (maintenance, doctor, realm create, bootstrap) where the deployment's
// database is: opened here when this process can open it, else, when `proudauth dev` holds the
// embedded database, on that process through its internal listener (docs/cli.md, "Commands that
// open the database"; main/operator-access.ts).
import { resolve } from 'node:path';
import { DirectoryLockedError } from '../../platform/db/dir-lock.ts';
import { Problem } from '../../platform/http/problem.ts';
import { readOperatorAccess } from '../operator-access.ts';
import { decodeOperatorInput, type OperatorOperation } from '../operator-operations.ts';
import { loadRuntimeConfig } from '../runtime-config.ts';
import { withCliContext } from './cli-context.ts';
import { CliError } from './cli-error.ts';
import { cliIo, configFlag } from './cli-io.ts';

export interface OperatorRun {
  /** Members asked for once the command knows it can run (a password), merged into the input. */
  ask?: () => Promise<Record<string, unknown>>;
  /** Flag names for the input's members, so refusals speak of what the operator typed. */
  flagNames?: Record<string, string>;
}

type FieldErrors = { field?: string; code?: string; detail?: string }[] | undefined;

function refusal(detail: string, errors: FieldErrors, names: Record<string, string>): CliError {
  const lines = (errors ?? []).map(
    (e) => `\n  ${names[e.field ?? ''] ?? e.field ?? ''}: ${e.code ?? ''}${e.detail ? ` (${e.detail})` : ''}`,
  );
  return new CliError(`${detail}${lines.join('')}`);
}

async function viaRunningServer<I>(
  dataDir: string,
  locked: DirectoryLockedError,
  op: OperatorOperation<I>,
  input: Record<string, unknown>,
  run: OperatorRun,
): Promise<unknown> {
  const access = readOperatorAccess(dataDir);
  if (!access || access.pid !== locked.holder)
    throw new CliError(
      `${locked.message}. That process offers no operator access (only a running \`proudauth dev\` ` +
        'does): wait for it or stop it and run the command again.',
    );
  const call = async (method: string, path: string, body?: unknown) => {
    let res: Response;
    try {
      res = await fetch(`${access.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${access.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (e) {
      throw new CliError(
        `${locked.message}, and its internal listener at ${access.url} does not answer (${(e as Error).message}): ` +
          'stop it and run the command again.',
      );
    }
    const answer = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (!res.ok)
      throw refusal(
        String(answer?.detail ?? `HTTP ${res.status}`),
        answer?.errors as FieldErrors,
        run.flagNames ?? {},
      );
    return answer;
  };
  await call('GET', '/operator');
  const asked = (await run.ask?.()) ?? {};
  const result = await call(op.method, op.path, op.method === 'GET' ? undefined : { ...input, ...asked });
  cliIo().stderr.write(
    `done by the running proudauth dev (pid ${access.pid}), which holds the embedded database\n`,
  );
  return result;
}

/**
 * Runs `op` with `input` (wire member names) on the database this command opens, or through the
 * `proudauth dev` that holds it. The result is the same either way.
 */
export async function runOperatorOperation<I>(
  flags: Record<string, unknown>,
  op: OperatorOperation<I>,
  input: Record<string, unknown>,
  run: OperatorRun = {},
): Promise<unknown> {
  try {
    return await withCliContext(flags, async (ctx) => {
      const asked = (await run.ask?.()) ?? {};
      let decoded: I;
      try {
        decoded = decodeOperatorInput(op, { ...input, ...asked });
      } catch (e) {
        if (e instanceof Problem) throw refusal(e.detail ?? e.code, e.extra?.errors, run.flagNames ?? {});
        throw e;
      }
      return op.run(ctx, decoded);
    });
  } catch (e) {
    if (!(e instanceof DirectoryLockedError) || e.holder === null) throw e;
    const dataDir = resolve(loadRuntimeConfig(configFlag(flags), cliIo().env).dataDir);
    return viaRunningServer(dataDir, e, op, input, run);
  }
}
