// Loading the operator configuration for any entry point. On the embedded database in development
// a missing root key is generated into the data directory, so `npm start` and identity-cli share
// it without setup; production and PostgreSQL deployments must configure keys.root explicitly.
import { loadConfig } from '../platform/config/load.ts';
import type { Config } from '../platform/config/settings.ts';
import { devRootKeyOverrides } from './dev-setup.ts';

/** `file` is the --config flag; without it PROUDAUTH_CONFIG names the file, if set. */
export function loadRuntimeConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Config {
  const config = loadConfig({ file, env });
  const embeddedDev = config.environment === 'development' && !config.database.url;
  if (embeddedDev && Object.keys(config.keys.root).length === 0) {
    return loadConfig({ file, env, overrides: devRootKeyOverrides(config.dataDir) });
  }
  return config;
}
