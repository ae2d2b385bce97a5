// identity-cli's commands, run with given surroundings (cli-io.ts): the bin entry point
// (main/identity-cli.ts) passes the real process's, tests their own.

import { FlagError } from '../../platform/cli/flags.ts';
import { ConfigError } from '../../platform/config/load.ts';
import { CliError } from './cli-error.ts';
import { type CliIo, withCliIo } from './cli-io.ts';
import { api } from './commands/api.ts';
import { audit } from './commands/audit.ts';
import { bootstrap } from './commands/bootstrap.ts';
import { config } from './commands/config.ts';
import { doctor, generateRootKeyCommand } from './commands/keys.ts';
import { login } from './commands/login.ts';
import { logout } from './commands/logout.ts';
import { maintenance } from './commands/maintenance.ts';
import { migrateFrom } from './commands/migrate-from.ts';
import { realmCreate } from './commands/realm-create.ts';
import { realmSetLoginUi, realmSetPolicy } from './commands/realm-login-ui.ts';
import { restoreBegin, restoreReconcile, revocationLog } from './commands/restore.ts';

const USAGE = `usage: identity-cli <command> [flags]

commands:
  realm create NAME [--display-name TEXT]      create a realm with its signing key and built-in client
  realm set-login-ui NAME URL                  where the realm's authorization endpoint sends browsers
  realm set-policy NAME --data JSON|@FILE       change realm policy members (docs/policy.md)
                                               both go through the API of a running server (log in
                                               first); without a server they write the database
  bootstrap --realm NAME --admin-email EMAIL [--password-file FILE]
                                               create the realm if needed and its first administrator
  login --realm NAME [--email EMAIL] [--server URL] [--credentials FILE] [--qr dark|light|ansi]
                                               sign in headlessly with the built-in identity-cli client
                                               and store an admin token (docs/cli.md)
  login --realm NAME --device [--server URL] [--credentials FILE]
                                               sign in on another device with a user code (RFC 8628)
  api METHOD PATH [--data JSON|@FILE|@-] [--header 'NAME: VALUE']... [--include]
      [--realm NAME] [--server URL] [--credentials FILE]
                                               call the administration API of the logged-in realm
  logout [--realm NAME] [--server URL] [--credentials FILE]
                                               revoke and delete the stored admin token
  config validate FILE [--reconcile]           print the plan of a configuration document
  config import FILE [--dry-run] [--reconcile] import a configuration document (exit 1 on errors)
  config export [--out FILE]                   the realm's configuration document (export job)
  generate-root-key                            print a new random root key
  doctor                                       print non-secret fingerprints of the key hierarchy
  maintenance status | off | set --mode read_only|closed|debug [--message TEXT] [--retry-after SECONDS]
      [--debug-for DURATION] [--debug-component NAME] [--by NAME]
                                               show or set the maintenance mode of every server
  revocation-log [--since TIME] --out FILE     append the revocation log since TIME (default 24 hours
                                               ago) to FILE as JSON lines (mode 0600; docs/restore.md)
  restore-begin [--status]                     set (or show) the restore marker on a restored database
  restore-reconcile --log FILE [--invalidate-all-sessions]
                                               re-apply the revocation log, end one-time proofs and
                                               clear the marker, in one transaction (JSON report)
  migrate-from keycloak|zitadel|supertokens --input FILE --source-system NAME [--plan|--apply|--offline]
      [--source-version V] [--mapping FILE] [--write-mapping-template FILE] [--report FILE]
      [--write-documents DIR] [--import-totp] [--keep-attributes] [--batch-size N] ...
                                               convert another identity system's export and import it
                                               through the API (docs/migration.md)
  audit verify --archive DIR                   verify an audit archive's hashes and chain (no database;
                                               exit 1 on any problem)

every command takes --config FILE (or PROUDAUTH_CONFIG) and the same PROUDAUTH_* environment
settings as the server; login, api and logout use it only for server.public_origin when --server
is not given. Flags take one dash or two (-realm is --realm).`;

type Command = (argv: string[]) => Promise<unknown>;

const COMMANDS: Record<string, Command> = {
  bootstrap,
  doctor,
  'generate-root-key': generateRootKeyCommand,
  api,
  audit,
  config,
  login,
  logout,
  maintenance,
  'revocation-log': revocationLog,
  'restore-begin': restoreBegin,
  'restore-reconcile': restoreReconcile,
  'migrate-from': migrateFrom,
  realm: async (argv) => {
    const [sub, ...rest] = argv;
    if (sub === 'create') return realmCreate(rest);
    if (sub === 'set-login-ui') return realmSetLoginUi(rest);
    if (sub === 'set-policy') return realmSetPolicy(rest);
    throw new CliError(
      'usage: identity-cli realm create NAME | realm set-login-ui NAME URL | realm set-policy NAME --data JSON',
    );
  },
};

/** Runs one identity-cli command line to its end and answers its exit code; never exits the process. */
export function runIdentityCli(argv: readonly string[], io: CliIo): Promise<number> {
  return withCliIo(io, async () => {
    try {
      const code = await dispatch([...argv], io);
      return code ?? io.exitCode;
    } catch (e) {
      const expected = e instanceof CliError || e instanceof ConfigError || e instanceof FlagError;
      io.stderr.write(`identity-cli: ${(e as Error).message}\n`);
      if (!expected && io.env.PROUDAUTH_DEBUG) io.stderr.write(`${(e as Error).stack}\n`);
      return expected ? 2 : 1;
    }
  });
}

async function dispatch(argv: string[], io: CliIo): Promise<number | undefined> {
  const [name, ...rest] = argv;
  const command = name ? COMMANDS[name] : undefined;
  if (!command) {
    io.stderr.write(`${USAGE}\n`);
    return name === undefined || name === 'help' || name === '--help' ? 0 : 2;
  }
  const result = await command(rest);
  if (result === undefined) return undefined; // the command printed its own output, if any
  io.stdout.write(typeof result === 'string' ? `${result}\n` : `${JSON.stringify(result, null, 2)}\n`);
  return undefined;
}
