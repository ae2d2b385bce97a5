// identity-cli bootstrap --realm NAME --admin-email E [--password-file F]. The database is opened
// and checked (reachable, migrated, the embedded one not held by another process) before the
// password is asked for, so an operator never types it for a command that cannot run.
import { readFileSync } from 'node:fs';
import { BootstrapError, bootstrapAdministrator } from '../../../setup/bootstrap.service.ts';
import { InvalidRealmNameError } from '../../../setup/realm.service.ts';
import { requireKeyring } from '../../context.ts';
import { CONFIG_FLAG, parseFlags, withCliContext } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { promptSecret } from '../prompt.ts';

const USAGE =
  'usage: identity-cli bootstrap --realm NAME --admin-email EMAIL [--password-file FILE] [--config FILE]';

async function readPassword(file: string | undefined): Promise<string> {
  if (!file) return promptSecret('Password for the administrator');
  // Only the first line counts, so a trailing newline written by an editor is not part of it.
  return readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? '';
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
  return withCliContext(flags, async (ctx) => {
    const password = await readPassword(flags['password-file'] as string | undefined);
    try {
      const r = await bootstrapAdministrator(
        {
          db: ctx.db,
          keyring: requireKeyring(ctx),
          hasher: ctx.hasher,
          signingAlgorithm: ctx.config.keys.signingAlgorithm,
          clock: ctx.clock,
        },
        { realm, email, password },
      );
      return {
        realm: r.realm.name,
        realm_id: r.realm.id,
        realm_created: r.realmCreated,
        user_id: r.userId,
        required_actions: ['configure_totp'],
        issuer: `${ctx.config.server.publicOrigin}/realms/${r.realm.name}`,
      };
    } catch (e) {
      if (e instanceof BootstrapError || e instanceof InvalidRealmNameError) throw new CliError(e.message);
      throw e;
    }
  });
}
