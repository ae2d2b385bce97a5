// identity-cli config export: the realm's configuration document through the export job (spec doc
// 2, Jobs and exports): queue it, wait until the worker has run it, fetch the file with a download
// token, and write it to standard output or --out FILE, ready for git and `config import`.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseFlags } from '../../../platform/cli/flags.ts';
import {
  adminRequest,
  problemSummary,
  requireSignIn,
  responseBody,
  type StoredSignIn,
} from '../admin-api.ts';
import { CliError } from '../cli-error.ts';
import { cliIo, cliPath } from '../cli-io.ts';
import { serverFlag } from '../configured-server.ts';

export const EXPORT_USAGE = `usage: identity-cli config export [--out FILE] [--wait SECONDS] [--realm NAME] [--server URL]
                                [--credentials FILE] [--config FILE]`;

const POLL_MS = 500;
const FINISHED = new Set(['succeeded', 'failed', 'dead_letter', 'cancelled']);

type Json = Record<string, unknown>;

/** One call; the sign-in carries forward the token a refresh may have replaced. */
async function call(
  signIn: StoredSignIn,
  method: string,
  path: string,
  body: unknown = null,
  headers: Record<string, string> = {},
): Promise<{ signIn: StoredSignIn; status: number; body: unknown }> {
  const r = await adminRequest(signIn, {
    method,
    path,
    headers,
    body: body === null ? null : JSON.stringify(body),
  });
  const out = await responseBody(r.response);
  if (!r.ok) throw new CliError(`${method} ${path}: ${problemSummary(r.status, out)}`);
  return { signIn: { ...signIn, credential: r.credential }, status: r.status, body: out };
}

export async function configExport(args: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(args, {
    out: { type: 'string' },
    wait: { type: 'int' },
    realm: { type: 'string' },
    server: { type: 'string' },
    credentials: { type: 'string' },
    config: { type: 'string' },
  });
  if (rest.length > 0) throw new CliError(EXPORT_USAGE);
  const waitMs = ((flags.wait as number | undefined) ?? 120) * 1000;
  let signIn = requireSignIn({
    realm: flags.realm as string | undefined,
    server: serverFlag(flags),
    credentials: flags.credentials as string | undefined,
  });
  // A retried command must not queue a second export: one key per invocation.
  const started = await call(signIn, 'POST', '/configuration/exports', null, {
    'idempotency-key': randomUUID(),
  });
  signIn = started.signIn;
  const jobId = String((started.body as Json).job_id);

  const deadline = Date.now() + waitMs;
  let job: Json = {};
  for (;;) {
    const polled = await call(signIn, 'GET', `/jobs/${jobId}`);
    signIn = polled.signIn;
    job = polled.body as Json;
    if (FINISHED.has(String(job.state))) break;
    if (Date.now() > deadline)
      throw new CliError(
        `job ${jobId} is still ${String(job.state)} after ${waitMs / 1000} s: is a worker running (proudauth worker, or proudauth dev)?`,
      );
    await sleep(POLL_MS);
  }
  if (job.state !== 'succeeded')
    throw new CliError(
      `job ${jobId} ended ${String(job.state)}: ${String(job.last_error ?? 'no reason given')}`,
    );

  const grant = await call(signIn, 'POST', `/jobs/${jobId}/downloads`);
  signIn = grant.signIn;
  const file = await call(signIn, 'POST', '/job-downloads', {
    download_token: (grant.body as Json).download_token,
  });
  const text = `${JSON.stringify(file.body, null, 2)}\n`;
  if (typeof flags.out === 'string') {
    writeFileSync(cliPath(flags.out), text);
    cliIo().stderr.write(
      `identity-cli: configuration of realm ${signIn.credential.realm} written to ${flags.out}\n`,
    );
  } else cliIo().stdout.write(text);
  return undefined;
}
