// identity-cli bootstrap --realm NAME --admin-email E [--password-file F]. The database is opened
// and checked (reachable, migrated), or the running proudauth dev that holds the embedded one
// answers, before the password is asked for, so an operator never types it for a command that
// cannot run.
import { readFileSync } from 'node:fs';
import { bootstrap as bootstrapOperation } from '../../operator-operations.ts';
import { CONFIG_FLAG, parseFlags } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { cliPath } from '../cli-io.ts';
import { runOperatorOperation } from '../operator-client.ts';
import { promptSecret } from '../prompt.ts';

const USAGE =
  'usage: identity-cli bootstrap --realm NAME --admin-email EMAIL [--password-file FILE] [--config FILE]';

async function readPassword(file: string | undefined): Promise<string> {
  if (!file) return promptSecret('Password for the administrator');
  // Only the first line counts, so a trailing newline written by an editor is not part of it.
  return readFileSync(cliPath(file), 'utf8').split(/\r?\n/)[0] ?? '';
}

export async function bootstrap(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    ...CONFIG_FLAG,
    realm: { type: 'string' },
    'admin-email': { type: 'string' },
    'password-file': { type: 'string' },
  });
  const realm = flags.realm as string | undefined;
  const email = flags['admin-email'] as string | undefined;
  if (!realm || !email || rest.length > 0) throw new CliError(USAGE);
  return runOperatorOperation(
    flags,
    bootstrapOperation,
    { realm, admin_email: email },
    {
      ask: async () => ({ password: await readPassword(flags['password-file'] as string | undefined) }),
      flagNames: { realm: '--realm', admin_email: '--admin-email', password: 'password' },
    },
  );
}
