// What every database-backed identity-cli command starts from: the same configuration, keys and
// database as the server, so a command works against the embedded or the PostgreSQL deployment.

import { type FlagSpec, parseFlags } from '../../platform/cli/flags.ts';
import { schemaState } from '../../platform/db/migrate.ts';
import { createLogger } from '../../platform/log.ts';
import { type AppContext, createContext } from '../context.ts';
import { loadRuntimeConfig } from '../runtime-config.ts';
import { cliIo, configFlag } from './cli-io.ts';

export const CONFIG_FLAG: FlagSpec = { config: { type: 'string' } };

export async function withCliContext<T>(
  flags: Record<string, unknown>,
  fn: (ctx: AppContext) => Promise<T>,
): Promise<T> {
  const config = loadRuntimeConfig(configFlag(flags), cliIo().env);
  // Logs go to stderr so stdout stays the command's own (often JSON) output.
  const ctx = await createContext(config, {
    log: createLogger(config.observability.logLevel, cliIo().stderr as NodeJS.WritableStream),
    servesMetrics: false,
    env: cliIo().env,
  });
  try {
    const state = await schemaState(ctx.db, ctx.migrations);
    if (!state.current) throw new Error('the database schema is not current: run `proudauth migrate` first');
    return await fn(ctx);
  } finally {
    ctx.detachSignals();
    await ctx.db.close();
  }
}

export { parseFlags };
