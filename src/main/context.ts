// Composition: everything a process needs, built once from the operator configuration.
import { resolve } from 'node:path';
import { AccessTokenVerifier } from '../access/verify-access-token.ts';
import type { ApiDeps } from '../api/api.deps.ts';
import { onSecuritySignal } from '../audit/index.ts';
import { GrantTypeControls } from '../emergency/grant-type-controls.ts';
import { UpstreamClient } from '../federation/upstream-client.ts';
import { KeyStore } from '../keys/key-store.ts';
import { FidoMetadata } from '../mfa/index.ts';
import type { Mailer, SmsSender } from '../notifications/index.ts';
import { WorkloadKeySets } from '../oauth/workload-key-sets.ts';
import type { MetricsAuth } from '../ops/internal.routes.ts';
import { MaintenanceGate } from '../ops/maintenance.ts';
import { type Clock, systemClock } from '../platform/clock.ts';
import { parseNamedUrls } from '../platform/config/named-urls.ts';
import type { Config } from '../platform/config/settings.ts';
import { loadKeyrings, type PepperRing, type RootKeyring } from '../platform/crypto/keyring.ts';
import { resolveSecretRef, resolveToken } from '../platform/crypto/secret-ref.ts';
import type { Db } from '../platform/db/db.ts';
import { loadEmbeddedDriver } from '../platform/db/embedded-driver.ts';
import { loadMigrations, type Migration } from '../platform/db/migrate.ts';
import { openPostgres } from '../platform/db/pg.ts';
import { tracedDb } from '../platform/db/traced-db.ts';
import { createLogger, type Logger } from '../platform/log.ts';
import { Metrics } from '../platform/metrics.ts';
import { OutboundHttp, type Resolver, systemResolver } from '../platform/net/outbound-http.ts';
import { tracer } from '../platform/tracing.ts';
import { RealmCache } from '../realms/realm-cache.ts';
import type { ChallengeProvider } from '../signin/signin.deps.ts';
import { PasswordHasher } from '../users/password-hasher.ts';
import { buildMailer, buildSmsSender } from './delivery.ts';
import { throttledWarning } from './throttled-warning.ts';
import { startTracing } from './tracing-start.ts';

export interface AppContext extends ApiDeps {
  config: Config;
  db: Db;
  keyring: RootKeyring | null;
  pepper: PepperRing;
  keyProvider: 'kms_unwrapped' | 'software';
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /**
   * Stops counting security signals of this process into `metrics`: a one-shot command calls it
   * when done, so a command run inside another process (a test's) leaves no listener behind.
   */
  detachSignals(): void;
  keyStore: KeyStore;
  /** Offline verification of this service's own access tokens (the live checks come on top). */
  tokenVerifier: AccessTokenVerifier;
  /** Realms by name for routing requests (one second per process). */
  realms: RealmCache;
  hasher: PasswordHasher;
  migrations: Migration[];
  metricsAuth: MetricsAuth;
  draining: boolean;
  /** The mail transport the worker sends through; null when none is configured. */
  mailer: Mailer | null;
  /** The SMS adapter; null when delivery.sms_url is unset. */
  sms: SmsSender | null;
  /** The one outbound HTTP client (webhook deliveries); closed when the process stops. */
  outbound: OutboundHttp;
  /** The deployment's maintenance mode as this process sees it (ops/maintenance.ts). */
  maintenance: MaintenanceGate;
}

export async function openDatabase(config: Config, log?: Logger, applicationName = 'proudauth'): Promise<Db> {
  if (config.database.url) {
    const warn = log
      ? throttledWarning(log, 'database connection lost; the pool reconnects on demand')
      : null;
    return openPostgres({
      url: config.database.url,
      maxConns: config.storage.maxConns,
      statementTimeoutMs: config.storage.statementTimeoutMs,
      applicationName,
      ...(warn ? { onConnectionError: (e: Error) => warn({ err: String(e) }) } : {}),
    });
  }
  const { openPglite } = await loadEmbeddedDriver();
  return openPglite({ dataDir: resolve(config.dataDir) });
}

async function resolveMetricsAuth(config: Config, env: NodeJS.ProcessEnv, log: Logger): Promise<MetricsAuth> {
  const ref = config.server.metricsToken;
  if (!ref) return { kind: 'open' };
  try {
    const token = await resolveToken(ref, {
      env,
      environment: config.environment,
      kms: config.keys.kms,
      what: 'server.metrics_token',
    });
    return token ? { kind: 'token', token } : { kind: 'unresolvable' };
  } catch (e) {
    // The spec keeps the process up and refuses every scrape instead (doc 2, Health endpoints).
    log.error(
      { err: (e as Error).message },
      'server.metrics_token could not be resolved: /metrics and /status refuse all',
    );
    return { kind: 'unresolvable' };
  }
}

/** The challenge providers realms may name; a secret that cannot be resolved is logged, not fatal. */
async function resolveChallengeProviders(
  config: Config,
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<Map<string, ChallengeProvider>> {
  const table = parseNamedUrls(
    config.security.challengeProviders,
    'security.challenge_providers',
    'provider',
  );
  let secret: string | null = null;
  const ref = config.security.challengeProviderSecret;
  if (ref) {
    try {
      secret = await resolveToken(ref, {
        env,
        environment: config.environment,
        kms: config.keys.kms,
        what: 'security.challenge_provider_secret',
      });
    } catch (e) {
      log.error({ err: (e as Error).message }, 'security.challenge_provider_secret could not be resolved');
    }
  }
  return new Map([...table].map(([name, p]) => [name, { url: p.url, secret }]));
}

export interface ContextOptions {
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  log?: Logger;
  /** An already open database (tests); otherwise opened from the configuration. */
  db?: Db;
  /** Where the dev mail folder announces each message's code or link (proudauth dev: the terminal). */
  announceMail?: (line: string) => void;
  /** Host name resolution of outbound destinations (tests give a fixed table); the system's otherwise. */
  resolver?: Resolver;
  /**
   * False for one-shot commands (`proudauth migrate`, identity-cli) that open no internal
   * listener: they do not resolve server.metrics_token, so an `env:` reference meant for the
   * server cannot make them log an error. Their context refuses every scrape.
   */
  servesMetrics?: boolean;
}

export async function createContext(config: Config, opts: ContextOptions = {}): Promise<AppContext> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? createLogger(config.observability.logLevel);
  const { root, pepper, keyProvider } = await loadKeyrings(config, env);
  const metricsAuth: MetricsAuth =
    opts.servesMetrics === false ? { kind: 'unresolvable' } : await resolveMetricsAuth(config, env, log);
  const metrics = new Metrics();
  // Every security.alert written counts once under its signal (spec doc 2, Metrics).
  const detachSignals = onSecuritySignal((signal) => metrics.securitySignals.inc({ signal }));
  const resolver = opts.resolver ?? systemResolver;
  const outbound = new OutboundHttp({ resolver });
  await startTracing(config, outbound, log);
  const untracedDb = opts.db ?? (await openDatabase(config, log));
  const db = tracer() === null ? untracedDb : tracedDb(untracedDb);
  const clock = opts.clock ?? systemClock;
  const keyStore = new KeyStore(db, root, clock);
  const mailer = await buildMailer(config, env, opts.announceMail ?? (() => {}));
  const sms = await buildSmsSender(config, env, opts.announceMail ?? (() => {}));
  const realms = new RealmCache(db, clock);
  const deliveryPolicy = {
    environment: config.environment,
    egressAllowlist: config.delivery.egressAllowlist,
    allowPrivateWebhooks: config.delivery.allowPrivateWebhooks,
    allowedDestinations: config.privacy.residency.allowedDestinations,
  };
  return {
    config,
    db,
    keyring: root,
    pepper,
    keyProvider,
    clock,
    log,
    metrics,
    detachSignals,
    keyStore,
    realms,
    grantTypeControls: new GrantTypeControls(db, clock),
    maintenance: new MaintenanceGate(db, clock, log),
    tokenVerifier: new AccessTokenVerifier({
      keySets: keyStore,
      clock,
      clockSkewMs: config.tokens.clockSkewMs,
      maxTokenBytes: config.limits.maxTokenBytes,
    }),
    hasher: new PasswordHasher(config.security.password, pepper, root),
    workloadKeys: new WorkloadKeySets(
      outbound,
      {
        environment: config.environment,
        egressAllowlist: config.delivery.egressAllowlist,
        allowPrivate: config.delivery.allowPrivateWebhooks,
      },
      () => clock.now().getTime(),
    ),
    migrations: loadMigrations(),
    metricsAuth,
    draining: false,
    mailer,
    sms,
    outbound,
    upstream: new UpstreamClient({
      outbound,
      clockSkewMs: config.tokens.clockSkewMs,
      egress: {
        environment: config.environment,
        egressAllowlist: config.delivery.egressAllowlist,
        allowPrivate: config.delivery.allowPrivateWebhooks,
      },
      secrets: {
        keyring: root,
        resolveRef: async (ref) =>
          (
            await resolveSecretRef(ref, {
              env,
              environment: config.environment,
              kms: config.keys.kms,
              what: 'identity provider client_secret_ref',
            })
          )
            .toString('utf8')
            .trim(),
      },
      now: () => clock.now().getTime(),
    }),
    challengeProviders: await resolveChallengeProviders(config, env, log),
    fidoMetadata: new FidoMetadata(
      {
        blobFile: config.webauthn.metadataBlob,
        rootFile: config.webauthn.metadataRoot,
        gracePeriodMs: config.webauthn.metadataGracePeriodMs,
      },
      log,
      () => clock.now(),
    ),
    webhooks: { db, keyring: root, resolver, policy: deliveryPolicy },
    hookAdmin: { db, keyring: root, resolver, policy: deliveryPolicy, realms },
    hooks: {
      db,
      keyring: root,
      outbound,
      policy: deliveryPolicy,
      clock,
      log,
      countCall: (kind, outcome) => metrics.hookCalls.inc({ kind, outcome }),
    },
  };
}

/** The root keyring, or a start-up error telling the operator how to configure one. */
export function requireKeyring(ctx: AppContext): RootKeyring {
  if (!ctx.keyring) {
    throw new Error(
      'no root key is configured (keys.root.<version> and keys.active_version); create one with `identity-cli generate-root-key`',
    );
  }
  return ctx.keyring;
}
