// A private PostgreSQL cluster for one benchmark run (bench/README.md protocol 1) and a realistic realm in
// it: 10,000 users (email + username, one Argon2id verifier hashed once and shared), ~2 custom role
// assignments each, 1,000 clients, 100,000 historical sessions. Bulk rows go in with batched
// `insert ... select from unnest(...)`; the realm itself is created by createRealm.
//
// Standalone: `node --import tsx bench/seed.ts` makes a cluster, seeds it, prints the counts and
// stops the cluster again. bench/run.ts imports startCluster and seedDatabase.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { OPERATOR_ACTOR } from '../src/audit/audit.types.ts';
import {
  clientSecretVerifier,
  generateClientSecret,
  issueClientSecret,
} from '../src/clients/client-secrets.ts';
import { createContext } from '../src/main/context.ts';
import { generateRootKey, type RootKeyring } from '../src/platform/crypto/keyring.ts';
import type { Db } from '../src/platform/db/db.ts';
import { loadMigrations, migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { newId } from '../src/platform/ids.ts';
import { createLogger } from '../src/platform/log.ts';
import { createRealm } from '../src/setup/realm.service.ts';
import {
  assertLoopback,
  audienceOf,
  type BenchCredentials,
  benchConfig,
  CC_AUDIENCE,
  CC_CALLERS,
  CLIENTS,
  type ClientCredentials,
  emailOf,
  freePort,
  INTROSPECT_AUDIENCE,
  INTROSPECTOR_CLIENT_ID,
  LOGIN_CLIENT_ID,
  LOGIN_REDIRECT,
  PASSWORD,
  REALM,
  REALM_ES,
  RESOURCES,
  resourceServerOf,
  USERS,
  WORK_DIR,
} from './common.ts';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const DB_NAME = 'proudauth_bench';

export interface Cluster {
  kind: 'private' | 'shared';
  /** What the output says about where the data lives. */
  description: string;
  url: string;
  /** pg_stat_statements is loaded (private cluster): statements per request can be counted. */
  sqlStats: boolean;
  /** The postmaster (private cluster) for CPU accounting; null on the shared server. */
  postmasterPid: number | null;
  stop(): Promise<void>;
  /** Synchronous last-resort stop for process exit handlers. */
  stopNow(): void;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL binary, as the postgres OS user when we are root (initdb refuses root). */
function pgRun(cmd: string, args: string[], opts: { cpu?: string; timeoutMs?: number } = {}) {
  const bin = join(PG_BIN, cmd);
  const inner = opts.cpu ? ['taskset', '-c', opts.cpu, bin, ...args] : [bin, ...args];
  const full = isRoot() ? ['runuser', '-u', 'postgres', '--', ...inner] : inner;
  const r = spawnSync(full[0] as string, full.slice(1), {
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

function chownTree(path: string): void {
  if (!isRoot()) return;
  const r = spawnSync('chown', ['-R', 'postgres:postgres', path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`chown ${path}: ${r.stderr}`);
}

/**
 * initdb into `<runDir>/pgdata`, its own port on 127.0.0.1 and its own socket directory, started
 * with pg_ctl pinned to `cpu` (the load generator's core, so the server keeps CPU 0 to itself).
 */
export async function startPrivateCluster(runDir: string, cpu: string): Promise<Cluster> {
  const dataDir = join(runDir, 'pgdata');
  const sockDir = join(runDir, 'pgsock');
  const logFile = join(runDir, 'postgres.log');
  mkdirSync(runDir, { recursive: true, mode: 0o755 });
  mkdirSync(sockDir, { recursive: true });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  writeFileSync(logFile, '');
  for (const p of [sockDir, dataDir, logFile]) chownTree(p);

  const init = pgRun('initdb', [
    '-D',
    dataDir,
    '-A',
    'trust',
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  if (!init.ok) throw new Error(`initdb failed:\n${init.out}`);
  const port = await freePort();
  const options = [
    `-c listen_addresses=127.0.0.1`,
    `-c port=${port}`,
    `-c unix_socket_directories=${sockDir}`,
    '-c max_connections=100',
    '-c shared_buffers=256MB',
    // Statement counts per request for the report (bench/run.ts resets and reads it around each run).
    '-c shared_preload_libraries=pg_stat_statements',
  ].join(' ');
  const start = pgRun('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'], {
    cpu,
  });
  if (!start.ok) {
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
    pgRun('pg_ctl', ['-D', dataDir, '-m', 'immediate', 'stop']);
    throw new Error(`pg_ctl start failed:\n${start.out}\n${log}`);
  }
  const postmasterPid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let stopped = false;
  const cleanup = () => {
    if (process.env.KEEP_PG !== '1') rmSync(dataDir, { recursive: true, force: true });
  };
  const base = `postgres://postgres@127.0.0.1:${port}`;
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    await admin.query(`create database ${DB_NAME}`);
  } finally {
    await admin.end();
  }
  const bench = new pg.Client({ connectionString: `${base}/${DB_NAME}` });
  await bench.connect();
  try {
    await bench.query('create extension pg_stat_statements');
  } finally {
    await bench.end();
  }
  return {
    kind: 'private',
    sqlStats: true,
    description: `private cluster (initdb ${dataDir}, 127.0.0.1:${port}, PostgreSQL 15, postmaster ${postmasterPid} pinned to CPU ${cpu})`,
    url: `${base}/${DB_NAME}`,
    postmasterPid,
    async stop() {
      if (stopped) return;
      stopped = true;
      const r = pgRun('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
      if (!r.ok) pgRun('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      cleanup();
    },
    stopNow() {
      if (stopped) return;
      stopped = true;
      pgRun('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], { timeoutMs: 20_000 });
      cleanup();
    },
  };
}

/** Fallback: a scratch database on the local server at 127.0.0.1:5432, dropped at the end. */
export async function startSharedDatabase(): Promise<Cluster> {
  const base = process.env.BENCH_FALLBACK_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  assertLoopback(base);
  const name = `proudauth_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  const drop = async () => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  };
  let stopped = false;
  return {
    kind: 'shared',
    sqlStats: false,
    description: `scratch database ${name} on the local PostgreSQL at 127.0.0.1:5432 (its CPU is not attributed)`,
    url: u.toString(),
    postmasterPid: null,
    async stop() {
      if (stopped) return;
      stopped = true;
      await drop();
    },
    stopNow() {
      if (stopped) return;
      stopped = true;
      spawnSync('psql', [base, '-c', `drop database if exists ${name} with (force)`], { timeout: 10_000 });
    },
  };
}

/** The private cluster, or the shared-server fallback when it cannot be made (or BENCH_PG=shared). */
export async function startCluster(runDir: string, cpu = '1'): Promise<Cluster> {
  if (process.env.BENCH_PG === 'shared') return startSharedDatabase();
  try {
    return await startPrivateCluster(runDir, cpu);
  } catch (e) {
    process.stderr.write(
      `WARNING: private PostgreSQL cluster failed, falling back: ${(e as Error).message}\n`,
    );
    return startSharedDatabase();
  }
}

export function writeRootKey(runDir: string): string {
  const file = join(runDir, 'root-key');
  mkdirSync(runDir, { recursive: true });
  writeFileSync(file, `${generateRootKey()}\n`, { mode: 0o600 });
  return file;
}

export interface SeedSummary {
  realm: string;
  realmId: string;
  /** The ES256 realm of the client_credentials ES256 scenario. */
  realmEs: string;
  realmEsId: string;
  users: number;
  identifiers: number;
  roleAssignments: number;
  /** Both realms, built-in clients included. */
  clients: number;
  clientSecrets: number;
  sessions: number;
  resources: number;
  servicePrincipals: number;
  clientGrants: number;
  introspectors: number;
  oauthGrants: number;
  opaqueTokens: number;
  tokenRevocations: number;
  hashMs: number;
  seconds: number;
}

export interface SeedResult {
  summary: SeedSummary;
  /** Secrets for the load generator; kept out of results.json. */
  credentials: BenchCredentials;
}

const CUSTOM_ROLES = 20;
const SESSIONS = 100_000;
const BATCH = 2_000;
/** Live grants of users to clients: ten web clients per user. */
const GRANTS_PER_USER = 10;
const OPAQUE_TOKENS = 20_000;
const TOKEN_REVOCATIONS = 20_000;
const USER_REVOCATIONS = 500;

interface SeededClient {
  id: string;
  clientId: string;
  type: string;
  auth: string;
}

async function batched(
  n: number,
  size: number,
  fn: (from: number, to: number) => Promise<void>,
): Promise<void> {
  for (let from = 0; from < n; from += size) await fn(from, Math.min(n, from + size));
}

/** Migrates the database and seeds realm `bench`. */
export async function seedDatabase(url: string, rootKeyFile: string): Promise<SeedResult> {
  const t0 = Date.now();
  const config = benchConfig({ databaseUrl: url, rootKeyFile });
  const db: Db = openPostgres({
    url,
    maxConns: 4,
    statementTimeoutMs: 600_000,
    applicationName: 'bench-seed',
  });
  try {
    await migrate(db, loadMigrations());
    const ctx = await createContext(config, { db, env: {}, log: createLogger('silent') });
    if (!ctx.keyring) throw new Error('no keyring');
    const now = new Date();
    const realm = await createRealm(
      { db, keyring: ctx.keyring, signingAlgorithm: config.keys.signingAlgorithm },
      { name: REALM, displayName: 'Benchmark realm' },
      OPERATOR_ACTOR,
      now,
    );
    const rid = realm.id;

    // One Argon2id verifier at the configured cost, shared by every seeded account.
    const h0 = Date.now();
    const verifier = await ctx.hasher.hash(PASSWORD);
    const hashMs = Date.now() - h0;

    const userIds: string[] = [];
    for (let i = 0; i < USERS; i++) userIds.push(newId('usr', now.getTime() - (USERS - i) * 1000));
    await batched(USERS, BATCH, async (from, to) => {
      const ids = userIds.slice(from, to);
      const idx = ids.map((_, k) => from + k);
      await db.tx(async (q) => {
        await q.query(
          `insert into users (realm_id, id, state, display_name, required_actions, created_via, created_at, updated_at)
           select $1, u.id, 'active', u.name, '{}', 'import', $2, $2 from unnest($3::text[], $4::text[]) as u(id, name)`,
          [rid, now, ids, idx.map((i) => `Bench User ${i}`)],
        );
        const emails = idx.map(emailOf);
        const usernames = idx.map((i) => `user${String(i).padStart(5, '0')}`);
        await q.query(
          `insert into user_identifiers (realm_id, id, user_id, type, value, value_key, verified, verified_at, is_primary, created_at)
           select $1, x.id, x.uid, x.type, x.value, lower(x.value), true, $2, x.prim, $2
             from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[]) as x(id, uid, type, value, prim)`,
          [
            rid,
            now,
            [...ids.map(() => newId('idf')), ...ids.map(() => newId('idf'))],
            [...ids, ...ids],
            [...ids.map(() => 'email'), ...ids.map(() => 'username')],
            [...emails, ...usernames],
            [...ids.map(() => true), ...ids.map(() => false)],
          ],
        );
        await q.query(
          `insert into password_credentials (realm_id, user_id, hash, pepper_version, created_at)
           select $1, u.id, $2, $3, $4 from unnest($5::text[]) as u(id)`,
          [rid, verifier.hash, verifier.pepperVersion, now, ids],
        );
      });
    });

    // Custom (non-privileged) roles, two distinct ones per user.
    const roleIds = Array.from({ length: CUSTOM_ROLES }, () => newId('rol'));
    await db.query(
      `insert into roles (realm_id, id, name, description, builtin, permissions, created_at)
       select $1, r.id, r.name, 'seeded', false, '{}', $2 from unnest($3::text[], $4::text[]) as r(id, name)`,
      [rid, now, roleIds, roleIds.map((_, i) => `team-${i}`)],
    );
    await batched(USERS, BATCH * 2, async (from, to) => {
      const ids: string[] = [];
      const roles: string[] = [];
      const subjects: string[] = [];
      for (let i = from; i < to; i++) {
        const a = i % CUSTOM_ROLES;
        const b = (i * 7 + 3) % CUSTOM_ROLES === a ? (a + 1) % CUSTOM_ROLES : (i * 7 + 3) % CUSTOM_ROLES;
        for (const r of [a, b]) {
          ids.push(newId('ras'));
          roles.push(roleIds[r] as string);
          subjects.push(userIds[i] as string);
        }
      }
      await db.query(
        `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source, created_at)
         select $1, x.id, x.role, 'user', x.subj, 'realm', '', 'admin', $2 from unnest($3::text[], $4::text[], $5::text[]) as x(id, role, subj)`,
        [rid, now, ids, roles, subjects],
      );
    });

    const clientRows = await seedClients(db, rid, now);
    const esRealm = await createRealm(
      { db, keyring: ctx.keyring, signingAlgorithm: 'ES256' },
      { name: REALM_ES, displayName: 'Benchmark realm (ES256)' },
      OPERATOR_ACTOR,
      now,
    );
    const esClientRows = await seedClients(db, esRealm.id, now);
    const rsCreds = await seedTokenService(db, ctx.keyring, rid, clientRows, now, [LOGIN_CLIENT_ID]);
    const esCreds = await seedTokenService(db, ctx.keyring, esRealm.id, esClientRows, now, []);
    const loginRow = clientRows.find((c) => c.clientId === LOGIN_CLIENT_ID) as SeededClient;
    const credentials: BenchCredentials = {
      ccRs256: rsCreds.callers,
      ccEs256: esCreds.callers,
      introspector: rsCreds.introspector,
      login: { clientId: LOGIN_CLIENT_ID, secret: await issueSecret(db, ctx.keyring, rid, loginRow.id, now) },
    };

    // Historical sessions (the grants of past sign-ins): 80% ended, 20% still live.
    await batched(SESSIONS, 10_000, async (from, to) => {
      const ids: string[] = [];
      const users: string[] = [];
      const ages: number[] = [];
      const live: boolean[] = [];
      for (let i = from; i < to; i++) {
        ids.push(newId('ses'));
        users.push(userIds[(i * 7919) % USERS] as string);
        ages.push((i % 1440) * 60);
        live.push(i % 5 === 0);
      }
      await db.query(
        `insert into sessions (realm_id, id, user_id, cookie_digest, auth_time, amr, acr, mfa, created_at, last_seen_at,
           idle_seconds, idle_expires_at, absolute_expires_at, revoked_at, revoked_reason)
         select $1, s.id, s.uid, encode(sha256(convert_to(s.id, 'UTF8')), 'hex'),
                $2::timestamptz - make_interval(secs => s.age), '{pwd}', 'basic', false,
                $2::timestamptz - make_interval(secs => s.age), $2::timestamptz - make_interval(secs => s.age), 7200,
                case when s.live then $2::timestamptz + interval '2 hours' else $2::timestamptz - make_interval(secs => s.age) + interval '30 minutes' end,
                case when s.live then $2::timestamptz + interval '12 hours' else $2::timestamptz - make_interval(secs => s.age) + interval '12 hours' end,
                case when s.live then null else $2::timestamptz - make_interval(secs => s.age) + interval '10 minutes' end,
                case when s.live then null else 'logout' end
           from unnest($3::text[], $4::text[], $5::int[], $6::boolean[]) as s(id, uid, age, live)`,
        [rid, now, ids, users, ages, live],
      );
    });

    await seedUserTokens(db, rid, userIds, clientRows, now);

    await db.exec('analyze');
    const count = async (sql: string) =>
      Number((await db.query<{ n: string }>(`select count(*) as n from ${sql}`, [rid])).rows[0]?.n ?? 0);
    const all = async (table: string) =>
      Number((await db.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]?.n ?? 0);
    return {
      summary: {
        realm: REALM,
        realmId: rid,
        realmEs: REALM_ES,
        realmEsId: esRealm.id,
        users: await count('users where realm_id = $1'),
        identifiers: await count('user_identifiers where realm_id = $1'),
        roleAssignments: await count('role_assignments where realm_id = $1'),
        clients: await all('clients'),
        clientSecrets: await all('client_secrets'),
        sessions: await count('sessions where realm_id = $1'),
        resources: await all('resources'),
        servicePrincipals: await all('service_principals'),
        clientGrants: await all('client_resource_grants'),
        introspectors: await all('resource_introspectors'),
        oauthGrants: await all('oauth_grants'),
        opaqueTokens: await all('opaque_access_tokens'),
        tokenRevocations: await all('token_revocations'),
        hashMs,
        seconds: (Date.now() - t0) / 1000,
      },
      credentials,
    };
  } finally {
    await db.close();
  }
}

/**
 * 1,000 clients of the five types (app-0000 .. app-0999; app-0500, a web client, is the sign-in
 * scenarios' client) and the resource servers rs-00 .. rs-49, confidential service clients that
 * introspect tokens of api-00 .. api-49.
 */
async function seedClients(db: Db, rid: string, now: Date): Promise<SeededClient[]> {
  const types = ['web', 'spa', 'native', 'service', 'web'] as const;
  const rows = Array.from({ length: CLIENTS }, (_, i) => {
    const cid = `app-${String(i).padStart(4, '0')}`;
    const type = types[i % types.length] as string;
    return {
      id: newId('cli'),
      clientId: cid,
      type,
      redirect: type === 'service' ? [] : [`https://${cid}.bench.example/callback`],
      grants: type === 'service' ? ['client_credentials'] : ['authorization_code', 'refresh_token'],
      auth: type === 'web' || type === 'service' ? 'client_secret_basic' : 'none',
    };
  });
  if (rows[500]?.clientId !== LOGIN_CLIENT_ID || !rows[500].redirect.includes(LOGIN_REDIRECT)) {
    throw new Error('seed: login client mismatch');
  }
  for (let i = 0; i < RESOURCES; i++) {
    rows.push({
      id: newId('cli'),
      clientId: resourceServerOf(i),
      type: 'service',
      redirect: [],
      grants: [],
      auth: 'client_secret_basic',
    });
  }
  await db.query(
    `insert into clients (realm_id, id, client_id, name, type, builtin, state, redirect_uris, allowed_origins,
       grant_types, token_endpoint_auth_method, consent_mode, created_at, updated_at)
     select $1, c.id, c.cid, 'Bench ' || c.cid, c.type, false, 'active',
            case when c.redir = '' then '{}'::text[] else array[c.redir] end, '{}',
            string_to_array(c.grants, ','), c.auth, 'implicit', $2, $2
       from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) as c(id, cid, type, redir, grants, auth)`,
    [
      rid,
      now,
      rows.map((c) => c.id),
      rows.map((c) => c.clientId),
      rows.map((c) => c.type),
      rows.map((c) => c.redirect[0] ?? ''),
      rows.map((c) => c.grants.join(',')),
      rows.map((c) => c.auth),
    ],
  );
  return rows;
}

/** A secret the load generator will present, issued the way the administration API issues one. */
const issueSecret = async (db: Db, keyring: RootKeyring, rid: string, clientRowId: string, now: Date) =>
  (await db.tx((tx) => issueClientSecret(tx, keyring, rid, clientRowId, now, { actor: OPERATOR_ACTOR })))
    .secret;

/**
 * The token service of one realm: 50 resources (api-00 .. api-49; every fifth of api-02 .. api-49
 * opaque), a service principal per service client, client grants (service clients: api-00 for
 * the first 100 plus one more resource each, as service_principal; web clients: api-01 and one
 * more, as user), rs-NN introspecting api-NN, and a secret for every confidential client. Returns
 * the secrets of the client_credentials callers and of rs-01.
 */
async function seedTokenService(
  db: Db,
  keyring: RootKeyring,
  rid: string,
  clients: SeededClient[],
  now: Date,
  /** client_ids whose secret the caller issues itself. */
  reserved: readonly string[],
): Promise<{ callers: ClientCredentials[]; introspector: ClientCredentials }> {
  const resIds = Array.from({ length: RESOURCES }, () => newId('res'));
  const name = (i: number) => `api-${String(i).padStart(2, '0')}`;
  const opaque = (i: number) => i >= 2 && i % 5 === 0;
  const scopesOf = (i: number) =>
    i < 2 ? ['orders:read', 'orders:write'] : [`${name(i)}:read`, `${name(i)}:write`];
  const ttlOf = (i: number) =>
    i === 0 ? 300 : i === 1 ? 3600 : ([300, 600, 900, 1800, 3600][i % 5] as number);
  if (audienceOf(0) !== CC_AUDIENCE || audienceOf(1) !== INTROSPECT_AUDIENCE)
    throw new Error('seed: audiences');
  await db.query(
    `insert into resources (realm_id, id, name, audience, verification_mode, token_format, access_token_ttl_seconds,
       scopes, requires_organization, created_at, updated_at)
     select $1, r.id, r.name, r.aud, case when r.opaque then 'strict_online' else 'offline' end,
            case when r.opaque then 'opaque' else 'jwt' end, r.ttl, r.scopes::jsonb, false, $2, $2
       from unnest($3::text[], $4::text[], $5::text[], $6::boolean[], $7::int[], $8::text[]) as r(id, name, aud, opaque, ttl, scopes)`,
    [
      rid,
      now,
      resIds,
      resIds.map((_, i) => name(i)),
      resIds.map((_, i) => audienceOf(i)),
      resIds.map((_, i) => opaque(i)),
      resIds.map((_, i) => ttlOf(i)),
      resIds.map((_, i) => JSON.stringify(scopesOf(i).map((n) => ({ name: n })))),
    ],
  );

  const service = clients.filter((c) => c.type === 'service' && c.clientId.startsWith('app-'));
  const web = clients.filter((c) => c.type === 'web');
  await db.query(
    `insert into service_principals (realm_id, id, client_row_id, state, created_at, updated_at)
     select $1, p.id, p.client, 'active', $2, $2 from unnest($3::text[], $4::text[]) as p(id, client)`,
    [rid, now, service.map(() => newId('spr')), service.map((c) => c.id)],
  );

  const grants: Array<{ client: string; res: number; scopes: string[]; subject: string }> = [];
  service.forEach((c, k) => {
    if (k < CC_CALLERS)
      grants.push({ client: c.id, res: 0, scopes: scopesOf(0), subject: 'service_principal' });
    const other = 2 + (k % (RESOURCES - 2));
    grants.push({ client: c.id, res: other, scopes: [`${name(other)}:read`], subject: 'service_principal' });
  });
  web.forEach((c, k) => {
    grants.push({ client: c.id, res: 1, scopes: ['orders:read'], subject: 'user' });
    const other = 2 + (k % (RESOURCES - 2));
    grants.push({ client: c.id, res: other, scopes: scopesOf(other), subject: 'user' });
  });
  await db.query(
    `insert into client_resource_grants (realm_id, client_row_id, resource_id, allowed_scopes, subject_types,
       exchange_policy, created_at, updated_at)
     select $1, g.client, g.res, string_to_array(g.scopes, ' '), array[g.subject], null, $2, $2
       from unnest($3::text[], $4::text[], $5::text[], $6::text[]) as g(client, res, scopes, subject)`,
    [
      rid,
      now,
      grants.map((g) => g.client),
      grants.map((g) => resIds[g.res] as string),
      grants.map((g) => g.scopes.join(' ')),
      grants.map((g) => g.subject),
    ],
  );

  const byClientId = new Map(clients.map((c) => [c.clientId, c]));
  const rsRows = resIds.map((_, i) => byClientId.get(resourceServerOf(i)) as SeededClient);
  await db.query(
    `insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at)
     select $1, x.res, x.client, $2 from unnest($3::text[], $4::text[]) as x(res, client)`,
    [rid, now, resIds, rsRows.map((c) => c.id)],
  );

  // Secrets: the ones the load generator presents through issueClientSecret (with its audit
  // record), every other confidential client's as a bulk insert of the same verifier.
  const callers = service.slice(0, CC_CALLERS);
  const introspector = byClientId.get(INTROSPECTOR_CLIENT_ID) as SeededClient;
  const issued = new Set([...callers, introspector].map((c) => c.clientId).concat(reserved));
  const rest = clients.filter((c) => c.auth === 'client_secret_basic' && !issued.has(c.clientId));
  await db.query(
    `insert into client_secrets (realm_id, id, client_row_id, verifier, key_version, created_at)
     select $1, s.id, s.client, s.verifier, $2, $3 from unnest($4::text[], $5::text[], $6::text[]) as s(id, client, verifier)`,
    [
      rid,
      keyring.activeVersion,
      now,
      rest.map(() => newId('csk')),
      rest.map((c) => c.id),
      rest.map((c) =>
        clientSecretVerifier(keyring, keyring.activeVersion, rid, c.id, generateClientSecret()),
      ),
    ],
  );
  const callerCreds: ClientCredentials[] = [];
  for (const c of callers) {
    callerCreds.push({ clientId: c.clientId, secret: await issueSecret(db, keyring, rid, c.id, now) });
  }
  return {
    callers: callerCreds,
    introspector: {
      clientId: introspector.clientId,
      secret: await issueSecret(db, keyring, rid, introspector.id, now),
    },
  };
}

/**
 * What users hold in realm `bench` beyond sessions: 100,000 live grants (ten web clients per
 * user; user u's first is web client u mod 400), 20,000 opaque access tokens (half revoked or
 * expired), 20,000 revoked token ids and 500 account-wide revocations (all in the past).
 */
async function seedUserTokens(
  db: Db,
  rid: string,
  userIds: string[],
  clients: SeededClient[],
  now: Date,
): Promise<void> {
  const web = clients.filter((c) => c.type === 'web');
  const stride = Math.floor(web.length / GRANTS_PER_USER);
  await batched(USERS, 1_000, async (from, to) => {
    const users: string[] = [];
    const cids: string[] = [];
    for (let u = from; u < to; u++) {
      for (let j = 0; j < GRANTS_PER_USER; j++) {
        users.push(userIds[u] as string);
        cids.push((web[(u + j * stride) % web.length] as SeededClient).clientId);
      }
    }
    await db.query(
      `insert into oauth_grants (realm_id, id, user_id, client_id, scopes, resources, created_at, updated_at)
       select $1, g.id, g.uid, g.cid, '{openid,orders:read}', array[$3::text], $2, $2
         from unnest($4::text[], $5::text[], $6::text[]) as g(id, uid, cid)`,
      [rid, now, INTROSPECT_AUDIENCE, users.map(() => newId('grt')), users, cids],
    );
  });
  const opaqueRes = await db.query<{ id: string; audience: string }>(
    `select id, audience from resources where realm_id = $1 and token_format = 'opaque' order by audience`,
    [rid],
  );
  await batched(OPAQUE_TOKENS, 5_000, async (from, to) => {
    const rows = Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      const res = opaqueRes.rows[i % opaqueRes.rows.length] as { id: string; audience: string };
      const u = (i * 31) % USERS;
      const client = (web[u % web.length] as SeededClient).clientId;
      return { i, res, u, client, age: i % 7200 /* seconds ago */ };
    });
    await db.query(
      `insert into opaque_access_tokens (realm_id, token_digest, jti, resource_id, client_id, user_id, session_id,
         claims, expires_at, revoked_at, created_at)
       select $1, encode(sha256(convert_to(t.jti, 'UTF8')), 'hex'), t.jti, t.res, t.cid, t.uid, null,
              jsonb_build_object('aud', t.aud, 'sub', t.uid, 'client_id', t.cid, 'jti', t.jti, 'scope', 'openid'),
              $2::timestamptz - make_interval(secs => t.age) + interval '1 hour',
              case when t.revoked then $2::timestamptz - make_interval(secs => t.age / 2) end,
              $2::timestamptz - make_interval(secs => t.age)
         from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::boolean[])
           as t(jti, res, aud, cid, uid, age, revoked)`,
      [
        rid,
        now,
        rows.map(() => `bench-opaque-${newId('grt')}`),
        rows.map((r) => r.res.id),
        rows.map((r) => r.res.audience),
        rows.map((r) => r.client),
        rows.map((r) => userIds[r.u] as string),
        rows.map((r) => r.age),
        rows.map((r) => r.i % 4 === 0),
      ],
    );
  });
  await db.query(
    `insert into token_revocations (realm_id, jti, reason, expires_at, created_at)
     select $1, 'bench-revoked-' || g, 'revoked', $2::timestamptz + interval '1 hour', $2::timestamptz - make_interval(secs => g % 3600)
       from generate_series(1, $3::int) as g`,
    [rid, now, TOKEN_REVOCATIONS],
  );
  await db.query(
    `insert into user_revocations (realm_id, user_id, revoked_before)
     select $1, u.id, date_trunc('second', $2::timestamptz) - interval '1 day' from unnest($3::text[]) as u(id)`,
    [rid, now, userIds.filter((_, i) => i % (USERS / USER_REVOCATIONS) === 7)],
  );
}

async function main(): Promise<void> {
  const runDir = join(WORK_DIR, `seed-${process.pid}`);
  const rootKeyFile = writeRootKey(runDir);
  const cluster = await startCluster(runDir);
  const stopOnSignal = () => {
    cluster.stopNow();
    process.exit(130);
  };
  process.on('SIGINT', stopOnSignal);
  process.on('SIGTERM', stopOnSignal);
  try {
    process.stdout.write(`database: ${cluster.description}\n`);
    const { summary } = await seedDatabase(cluster.url, rootKeyFile);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await cluster.stop();
    rmSync(runDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: unknown) => {
    process.stderr.write(`seed: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
}
