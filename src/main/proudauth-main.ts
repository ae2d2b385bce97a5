// `proudauth dev | serve | worker | migrate`: the server's composition root, run with given
// surroundings (cli/cli-io.ts). The bin entry point (main/proudauth.ts) passes the real process's;
// tests run the one-shot commands (migrate, usage) in their own process. dev, serve and worker keep
// running and answer signals, so they run only as a process of their own.

import { join, resolve } from 'node:path';
import { accountPageUrl } from '../clients/builtin-clients.ts';
import { FlagError, parseFlags } from '../platform/cli/flags.ts';
import { ConfigError } from '../platform/config/load.ts';
import type { Config } from '../platform/config/settings.ts';
import { migrate, schemaState } from '../platform/db/migrate.ts';
import { createLogger } from '../platform/log.ts';
import { type CliIo, cliIo, configFlag, withCliIo } from './cli/cli-io.ts';
import { type AppContext, createContext, requireKeyring } from './context.ts';
import { DEV_ADMIN_EMAIL, DEV_REALM, ensureDevRealm } from './dev-setup.ts';
import { startHttpServers } from './http-server.ts';
import { newOperatorToken, publishOperatorAccess } from './operator-access.ts';
import { registerOperatorRoutes } from './operator-endpoints.ts';
import { installProcessGuards } from './process-guard.ts';
import { processLogger } from './process-log.ts';
import { loadRuntimeConfig } from './runtime-config.ts';
import { isGroupWorker, runServeGroup, serveProcessCount } from './serve-group.ts';
import { stopTracing } from './tracing-start.ts';
import { refuseWhileRestorePending, startWorker } from './worker/worker.ts';

const USAGE = `usage: proudauth <command> [--config FILE]

commands:
  dev      server and worker in one process on the embedded database (or database.url),
           migrations applied and realm "main" bootstrapped on first start
  serve    the public and internal HTTP listeners
  worker   periodic tasks and queues
  migrate  apply pending database migrations and exit`;

const out = (line: string) => cliIo().stdout.write(`${line}\n`);

function configFrom(argv: string[]): Config {
  const { flags } = parseFlags(argv, { config: { type: 'string' } });
  return loadRuntimeConfig(configFlag(flags), cliIo().env);
}

function contextFor(config: Config, command: string, servesMetrics = true): Promise<AppContext> {
  const io = cliIo();
  // In a process of its own the log shares stdout line by line (process-log.ts); in a test's
  // process it goes to the run's stdout, as JSON lines.
  const log = io.ownsProcess
    ? processLogger(config, command)
    : createLogger(config.observability.logLevel, io.stdout as NodeJS.WritableStream);
  return createContext(config, { log, servesMetrics, env: io.env });
}

/** The start-up line: where the process listens and which database it uses, never its URL. */
function logStarted(ctx: AppContext, fields: Record<string, unknown>): void {
  const { config } = ctx;
  ctx.log.info(
    {
      ...fields,
      database: config.database.url ? 'postgresql' : 'embedded',
      ...(config.database.url ? {} : { data_dir: config.dataDir }),
      public_origin: config.server.publicOrigin,
      environment: config.environment,
    },
    'started',
  );
}

/** Stops on SIGTERM or SIGINT; `drains` when the process has listeners that drain first. */
function onSignals(ctx: AppContext, stop: () => Promise<void>, drains = true): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    if (drains)
      ctx.log.info(
        { signal, drain_delay_ms: ctx.config.server.drainDelayMs },
        'shutdown: signal received, draining',
      );
    else ctx.log.info({ signal }, 'shutdown: signal received, stopping');
    stop().then(
      () => {
        ctx.log.info({ signal }, 'shutdown: closed');
        process.exit(0);
      },
      (e) => {
        ctx.log.error({ signal, err: (e as Error).message }, 'shutdown failed');
        process.stderr.write(`shutdown failed: ${(e as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

async function dev(argv: string[]): Promise<void> {
  const config = configFrom(argv);
  config.ui.enabled = true; // dev always serves the built-in login UI and account page
  // Without an SMTP server, mail goes to a folder and its code or link to this terminal.
  if (!config.delivery.smtpHost && !config.delivery.mailDir)
    config.delivery.mailDir = join(config.dataDir, 'mail');
  const ctx = await createContext(config, {
    log: processLogger(config, 'dev'),
    announceMail: (line) => process.stdout.write(`${line}\n`),
    env: cliIo().env,
  });
  installProcessGuards(ctx.log);
  requireKeyring(ctx);
  await migrate(ctx.db, ctx.migrations);
  await refuseWhileRestorePending(ctx.db); // dev runs a worker
  const admin = await ensureDevRealm(ctx);
  // This process holds the embedded database: identity-cli's operator commands come through it.
  const operatorToken = config.database.url ? null : newOperatorToken();
  const http = await startHttpServers(ctx, {
    internalRoutes: (app) => {
      if (operatorToken) registerOperatorRoutes(app, ctx, operatorToken);
    },
  });
  if (operatorToken) publishOperatorAccess(resolve(config.dataDir), http.internalUrl, operatorToken);
  const worker = startWorker(ctx);
  const issuer = `${config.server.publicOrigin}/realms/${DEV_REALM}`;
  logStarted(ctx, { command: 'dev', public: http.publicUrl, internal: http.internalUrl, realm: DEV_REALM });
  // The banner is collected and written in one write after the listeners are up: log lines share
  // process.stdout (process-log.ts), so none can land inside it.
  const banner: string[] = [];
  const out = (line: string) => banner.push(line);
  out(
    `ProudAuth is running (${config.database.url ? 'PostgreSQL' : `embedded database in ${config.dataDir}`})`,
  );
  out(`  public listener    ${http.publicUrl}   (public origin ${config.server.publicOrigin})`);
  out(
    `  internal listener  ${http.internalUrl}   (/metrics, /status${operatorToken ? ', identity-cli operator commands' : ''})`,
  );
  out(`  realm "${DEV_REALM}" issuer  ${issuer}`);
  out(`  key set            ${issuer}/jwks`);
  out(
    `  mail               ${config.delivery.smtpHost ? `SMTP ${config.delivery.smtpHost}:${config.delivery.smtpPort}` : `written to ${config.delivery.mailDir} (codes and links shown here)`}`,
  );
  out(
    `  account page       ${accountPageUrl(config.server.publicOrigin)}?realm=${DEV_REALM}   (open it to sign in)`,
  );
  out(`  register           ${accountPageUrl(config.server.publicOrigin)}?realm=${DEV_REALM}&register`);
  if (admin) {
    out('');
    out('First administrator of realm "main" (shown once; store it now):');
    out(`  email     ${admin.email}`);
    out(`  password  ${admin.password}`);
    out('  At first sign-in the administrator must enroll an authenticator app (TOTP).');
  } else if (!config.delivery.smtpHost) {
    // The only way back in that needs no other account: the self-service reset, whose code lands
    // in the dev mail folder and on this terminal (docs/signin.md, password/reset).
    out('');
    out(`Lost the password of ${DEV_ADMIN_EMAIL}? On the account page, type that address and choose`);
    out('  "Forgot your password?": the reset code is shown here.');
    if (!config.database.url) out(`  To start over instead, stop the server and delete ${config.dataDir}.`);
  }
  process.stdout.write(`${banner.join('\n')}\n`);
  onSignals(ctx, async () => {
    await http.shutdown();
    await worker.stop();
    await stopTracing();
    await ctx.db.close();
  });
}

async function reportSchema(ctx: AppContext): Promise<void> {
  const state = await schemaState(ctx.db, ctx.migrations);
  if (!state.current) {
    ctx.log.warn(
      { pending: state.pending, unknown: state.unknown, changed: state.changed },
      'database schema is not current: run `proudauth migrate`; /health/ready answers 503 until then',
    );
  }
}

async function serve(argv: string[]): Promise<void> {
  const config = configFrom(argv);
  const processes = serveProcessCount(config);
  if (processes > 1 && !isGroupWorker()) return runServeGroup(processes);
  const ctx = await contextFor(config, 'serve');
  if (isGroupWorker()) ctx.metrics.aggregateAcrossProcesses();
  installProcessGuards(ctx.log);
  requireKeyring(ctx);
  await reportSchema(ctx);
  // Reads the FIDO metadata once now, so a BLOB that does not verify or is past its nextUpdate is
  // logged at start-up rather than at the first passkey registration.
  await ctx.fidoMetadata.status();
  const http = await startHttpServers(ctx);
  logStarted(ctx, { command: 'serve', public: http.publicUrl, internal: http.internalUrl });
  onSignals(ctx, async () => {
    await http.shutdown();
    await stopTracing();
    await ctx.db.close();
  });
}

async function worker(argv: string[]): Promise<void> {
  const ctx = await contextFor(configFrom(argv), 'worker');
  installProcessGuards(ctx.log);
  requireKeyring(ctx);
  const state = await schemaState(ctx.db, ctx.migrations);
  if (!state.current) throw new Error('the database schema is not current: run `proudauth migrate` first');
  await refuseWhileRestorePending(ctx.db);
  const w = startWorker(ctx);
  const internal = await w.listenInternal();
  logStarted(ctx, { command: 'worker', ...(internal ? { internal } : {}) });
  onSignals(
    ctx,
    async () => {
      await w.stop();
      await stopTracing();
      await ctx.db.close();
    },
    false,
  );
}

async function migrateCommand(argv: string[]): Promise<void> {
  const config = configFrom(argv);
  const ctx = await contextFor(config, 'migrate', false);
  try {
    const applied = await migrate(ctx.db, ctx.migrations);
    out(JSON.stringify({ applied, current: (await schemaState(ctx.db, ctx.migrations)).current }));
  } finally {
    ctx.detachSignals();
    await ctx.db.close();
  }
}

type Command = (argv: string[]) => Promise<void>;

const ONE_SHOT: Record<string, Command> = { migrate: migrateCommand };
const LONG_RUNNING: Record<string, Command> = { dev, serve, worker };

/**
 * Runs one proudauth command line. Answers the exit code of a command that ends, or null once a
 * long-running command (dev, serve, worker) is up: its signal handler ends the process later.
 */
export function runProudauth(argv: readonly string[], io: CliIo): Promise<number | null> {
  return withCliIo(io, async () => {
    const [name, ...rest] = argv;
    const oneShot = name ? ONE_SHOT[name] : undefined;
    const longRunning = name ? LONG_RUNNING[name] : undefined;
    try {
      if (oneShot) {
        await oneShot(rest);
        return io.exitCode;
      }
      if (longRunning) {
        if (!io.ownsProcess) throw new Error(`${name} runs only as a process of its own`);
        await longRunning(rest);
        return null;
      }
    } catch (e) {
      const known = e instanceof ConfigError || e instanceof FlagError;
      io.stderr.write(`proudauth: ${(e as Error).message}\n`);
      if (!known && io.env.PROUDAUTH_DEBUG) io.stderr.write(`${(e as Error).stack}\n`);
      return known ? 2 : 1;
    }
    io.stderr.write(`${USAGE}\n`);
    return name === undefined || name === 'help' || name === '--help' ? 0 : 2;
  });
}
