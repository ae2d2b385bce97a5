// Starts the real public and internal listeners on ephemeral ports over this file's database, with
// a fresh realm per test so tests never see each other's rows.
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { OPERATOR_ACTOR } from '../../src/audit/audit.types.ts';
import { type ClientRow, insertClient, type NewClient } from '../../src/clients/clients.repo.ts';
import { systemCall } from '../../src/kernel/call.ts';
import { type AppContext, createContext } from '../../src/main/context.ts';
import { buildInternalApp, buildPublicApp } from '../../src/main/http-server.ts';
import { type Clock, systemClock, waitUntil } from '../../src/platform/clock.ts';
import { loadConfig } from '../../src/platform/config/load.ts';
import type { Db } from '../../src/platform/db/db.ts';
import { createLogger, type Logger } from '../../src/platform/log.ts';
import type { Resolver } from '../../src/platform/net/outbound-http.ts';
import { changePolicy, policyRulesOf } from '../../src/realms/index.ts';
import { currentPolicy } from '../../src/realms/policy.repo.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import { createRealm } from '../../src/setup/realm.service.ts';
import type { UserRow } from '../../src/users/users.repo.ts';
import { createUser, type NewUser } from '../../src/users/users.service.ts';
import { testKeyMaterial } from './key-pool.ts';
import { type Conformance, checkResponses } from './response-conformance.ts';
import { fileDatabase } from './test-db.ts';

/** A fixed test root key: tests must never depend on a key in the environment. */
export const TEST_ROOT_KEY = Buffer.alloc(32, 7).toString('base64');

/** The clock every harness runs on: the given one (else real time), moved forward on request. */
export interface HarnessClock extends Clock {
  advance(ms: number): void;
}

export function harnessClock(base: Clock = systemClock): HarnessClock {
  let offset = 0;
  return {
    now: () => new Date(base.now().getTime() + offset),
    advance: (ms) => {
      offset += ms;
    },
    // The base decides how to wait (real time, or a stopped clock moving itself).
    waitUntil: (at) => waitUntil(base, new Date(at.getTime() - offset)),
  };
}

export interface Harness {
  ctx: AppContext;
  /**
   * The application's clock. Tests that need an old authentication sign in for real and then move
   * this forward; nothing in the harness writes an authentication time.
   */
  clock: HarnessClock;
  publicApp: FastifyInstance;
  internalApp: FastifyInstance;
  publicUrl: string;
  internalUrl: string;
  /** fetch against the public listener */
  get(path: string, init?: RequestInit): Promise<Response>;
  internal(path: string, init?: RequestInit): Promise<Response>;
  createRealm(name?: string): Promise<RealmRow>;
  createClient(realm: RealmRow, client: NewClient): Promise<ClientRow>;
  createUser(realm: RealmRow, user: Omit<NewUser, 'createdVia'>): Promise<UserRow>;
  /**
   * Sets realm policy members, e.g. { interaction: { login_ui_url } }, through the policy service
   * the settings API uses: merged member by member, validated, a new revision when it changes.
   */
  setPolicy(realm: RealmRow, patch: Record<string, unknown>): Promise<void>;
  /**
   * Stores `document` as the realm's policy by SQL, unvalidated: only for tests of how the service
   * treats a stored policy that today's validation would refuse (written by an older release).
   */
  storeUncheckedPolicy(realm: RealmRow, document: Record<string, unknown>): Promise<void>;
}

export interface HarnessOptions {
  overrides?: Record<string, unknown>;
  clock?: Clock;
  /** A database of the test's own (migrated) instead of this file's database. */
  db?: Db;
  env?: NodeJS.ProcessEnv;
  /** Host name resolution of outbound destinations (webhooks); a fixed table keeps tests off DNS. */
  resolver?: Resolver;
  /** The application's logger (default silent); tests that read what the service logged pass one. */
  log?: Logger;
  /** Called with the public app before it listens (tests that need an extra route). */
  beforeListen?: (app: FastifyInstance, ctx: AppContext) => void;
  /**
   * Sets server.public_origin to the public listener's URL once it listens, so clients that
   * discover the issuer (test/integration/real-clients) can reach every endpoint it names.
   */
  publicOriginIsListener?: boolean;
}

export function testConfig(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}) {
  return loadConfig({
    file: null,
    env,
    overrides: {
      'keys.root.1': TEST_ROOT_KEY,
      'keys.active_version': 1,
      'server.listen': '127.0.0.1:0',
      'server.internal_listen': '127.0.0.1:0',
      'server.drain_delay': '0s',
      'security.password.argon_memory_kib': 8192,
      // The response-time floor of password and code steps would add its wait to every sign-in of
      // every test; the tests of the floor itself set it (signin/failures, signin/email-otp).
      'security.min_auth_response': 0,
      // Every test signs in from 127.0.0.1 into one database: the per-network budgets (sign-in
      // attempts, failed client authentication) would couple unrelated tests, so they are off
      // unless a test sets them.
      'security.budgets.network_attempts': 0,
      'security.budgets.network_auth_failures': 0,
      'observability.log_level': 'silent',
      ...overrides,
    },
  });
}

const address = (app: FastifyInstance): string => {
  const a = app.server.address();
  if (!a || typeof a === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${a.port}`;
};

/** An answer that breaks its route's declared schema fails the test (response-conformance.ts). */
function failOnMismatch(conformance: Conformance): void {
  const found = conformance.take();
  if (found.length > 0) throw new Error(`answer outside the route's schema: ${found.join('; ')}`);
}

export const uniqueRealmName = (): string => `t${randomBytes(5).toString('hex')}`;

export async function startHarness(t: TestContext, opts: HarnessOptions = {}): Promise<Harness> {
  const config = testConfig(opts.overrides, opts.env);
  const db = opts.db ?? (await fileDatabase());
  const clock = harnessClock(opts.clock);
  const ctx = await createContext(config, {
    db,
    env: opts.env ?? {},
    log: opts.log ?? createLogger('silent'),
    clock,
    ...(opts.resolver ? { resolver: opts.resolver } : {}),
  });
  const publicApp = buildPublicApp(ctx);
  const conformance = checkResponses(publicApp);
  opts.beforeListen?.(publicApp, ctx);
  const internalApp = buildInternalApp(ctx);
  await publicApp.listen({ host: '127.0.0.1', port: 0 });
  await internalApp.listen({ host: '127.0.0.1', port: 0 });
  // fetch reuses idle sockets. The edge's serverFactory leaves Node's 5 s keep-alive timeout, and a
  // job run in this process (PGlite, hashing) can hold the event loop past it: the server then
  // closes the socket the next request is written on (ECONNRESET). Idle sockets stay 72 s here.
  for (const app of [publicApp, internalApp]) app.server.keepAliveTimeout = 72_000;
  t.after(async () => {
    await Promise.all([publicApp.close(), internalApp.close(), ctx.outbound.close()]);
    failOnMismatch(conformance);
  });
  const publicUrl = address(publicApp);
  const internalUrl = address(internalApp);
  if (opts.publicOriginIsListener) ctx.config.server.publicOrigin = publicUrl;
  return {
    ctx,
    clock,
    publicApp,
    internalApp,
    publicUrl,
    internalUrl,
    get: async (path, init) => {
      const res = await fetch(`${publicUrl}${path}`, init);
      failOnMismatch(conformance);
      return res;
    },
    internal: (path, init) => fetch(`${internalUrl}${path}`, init),
    createRealm: (name = uniqueRealmName()) => {
      if (!ctx.keyring) throw new Error('harness has no keyring');
      return createRealm(
        {
          db: ctx.db,
          keyring: ctx.keyring,
          signingAlgorithm: config.keys.signingAlgorithm,
          newKeyMaterial: testKeyMaterial,
        },
        { name },
        OPERATOR_ACTOR,
        ctx.clock.now(),
      );
    },
    createClient: (realm, client) => ctx.db.tx((q) => insertClient(q, realm.id, client, ctx.clock.now())),
    createUser: (realm, user) =>
      createUser(
        ctx,
        realm.id,
        { emailVerified: true, ...user, createdVia: 'admin' },
        OPERATOR_ACTOR,
        ctx.clock.now(),
      ),
    setPolicy: async (realm, patch) => {
      await changePolicy(
        ctx.db,
        systemCall(realm.id, ctx.clock.now(), OPERATOR_ACTOR),
        { patch, reason: 'test' },
        policyRulesOf(ctx.config),
      );
    },
    storeUncheckedPolicy: async (realm, document) => {
      await ctx.db.tx(async (q) => {
        const current = await currentPolicy(q, realm.id);
        const next = current.revision + 1;
        await q.query(
          `insert into realm_policy_revisions (realm_id, revision, policy, reason, created_at) values ($1, $2, $3, 'test', now())`,
          [realm.id, next, JSON.stringify(document)],
        );
        await q.query('update realms set policy_revision = $2 where id = $1', [realm.id, next]);
      });
    },
  };
}
