// The server an HTTP command (login, api, logout) talks to when --server is not given: the
// server.public_origin of the configuration. Only the file and PROUDAUTH_* settings are read; no
// database is opened and, unlike the database commands, no root key is generated.
import { loadConfig } from '../../platform/config/load.ts';
import { cliIo, configFlag } from './cli-io.ts';

export function configuredServer(file: string | undefined, env: NodeJS.ProcessEnv = cliIo().env): string {
  return loadConfig({ file, env }).server.publicOrigin.replace(/\/+$/, '');
}

/** For api and logout: --server, else with --config that configuration's public origin, else none. */
export function serverFlag(flags: Record<string, unknown>): string | undefined {
  if (typeof flags.server === 'string') return flags.server;
  return typeof flags.config === 'string' ? configuredServer(configFlag(flags)) : undefined;
}
