// identity-cli api METHOD PATH: one administration API request with the stored admin token
// (docs/cli.md). PATH is relative to /api/v1/realms/{realm}. The access token is refreshed first
// when it has expired, and once more if the server refuses it (401) as it stands.
import { readFileSync } from 'node:fs';
import { parseFlags } from '../../../platform/cli/flags.ts';
import { adminRequest, problemSummary, requireSignIn, responseBody } from '../admin-api.ts';
import { CliError } from '../cli-error.ts';
import { cliIo, cliPath } from '../cli-io.ts';
import { serverFlag } from '../configured-server.ts';

const USAGE = `usage: identity-cli api METHOD PATH [--data JSON | --data @FILE | --data @-] [--header 'Name: value']...
                        [--include] [--realm NAME] [--server URL] [--credentials FILE] [--config FILE]`;

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** --data as given, from a file (@FILE) or from standard input (@-); checked to be JSON. */
export function requestBody(data: string | undefined): string | null {
  if (data === undefined) return null;
  let text = data;
  if (data.startsWith('@')) {
    const source = data.slice(1);
    try {
      text = source === '-' ? cliIo().readStdin() : readFileSync(cliPath(source), 'utf8');
    } catch (e) {
      throw new CliError(
        `cannot read ${source === '-' ? 'standard input' : source}: ${(e as Error).message}`,
      );
    }
  }
  try {
    JSON.parse(text);
  } catch (e) {
    throw new CliError(`--data is not JSON: ${(e as Error).message}`);
  }
  // Sent as written: the server's strict decoder, not this one, judges duplicates and the like.
  return text;
}

function requestHeaders(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
    if (!/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(name))
      throw new CliError(`--header ${line}: expected 'Name: value'`);
    if (name === 'authorization')
      throw new CliError('--header cannot set Authorization: the stored token is used');
    out[name] = line.slice(colon + 1).trim();
  }
  return out;
}

export async function api(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    config: { type: 'string' },
    data: { type: 'string' },
    header: { type: 'list' },
    include: { type: 'bool' },
    realm: { type: 'string' },
    server: { type: 'string' },
    credentials: { type: 'string' },
  });
  const [rawMethod, path, ...extra] = rest;
  if (!rawMethod || !path || extra.length > 0) throw new CliError(USAGE);
  const method = rawMethod.toUpperCase();
  if (!METHODS.has(method)) throw new CliError(`unknown method ${rawMethod}\n${USAGE}`);
  const body = requestBody(flags.data as string | undefined);
  if (body !== null && (method === 'GET' || method === 'HEAD'))
    throw new CliError(`${method} takes no --data`);
  const headers = requestHeaders(flags.header as string[]);

  const signIn = requireSignIn({
    realm: flags.realm as string | undefined,
    server: serverFlag(flags),
    credentials: flags.credentials as string | undefined,
  });
  const { response: res, credential } = await adminRequest(signIn, { method, path, headers, body });

  if (flags.include) {
    cliIo().stderr.write(`HTTP ${res.status} ${res.statusText}\n`);
    for (const [k, v] of res.headers) cliIo().stderr.write(`${k}: ${v}\n`);
  }
  const out = await responseBody(res);
  if (res.ok) return out;
  // The problem document goes to stdout like any answer, so scripts can read it; exit 1.
  if (out !== undefined) {
    cliIo().stdout.write(typeof out === 'string' ? `${out}\n` : `${JSON.stringify(out, null, 2)}\n`);
  }
  const hint = res.status === 401 ? `; run identity-cli login --realm ${credential.realm}` : '';
  cliIo().stderr.write(`identity-cli: ${method} ${path}: ${problemSummary(res.status, out)}${hint}\n`);
  cliIo().exitCode = 1;
  return undefined;
}
