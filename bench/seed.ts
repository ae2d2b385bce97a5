// A private PostgreSQL cluster for one benchmark run (BENCH.md protocol 1) and a realistic realm in
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
import { createContext } from '../src/main/context.ts';
import { generateRootKey } from '../src/platform/crypto/keyring.ts';
import type { Db } from '../src/platform/db/db.ts';
import { loadMigrations, migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { newId } from '../src/platform/ids.ts';
import { createLogger } from '../src/platform/log.ts';
import { createRealm } from '../src/realms/realm.service.ts';
import {
  assertLoopback,
  benchConfig,
  CLIENTS,
  emailOf,
  freePort,
  LOGIN_CLIENT_ID,
  LOGIN_REDIRECT,
  PASSWORD,
  REALM,
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
  users: number;
  identifiers: number;
  roleAssignments: number;
  clients: number;
  sessions: number;
  hashMs: number;
  seconds: number;
}

const CUSTOM_ROLES = 20;
const SESSIONS = 100_000;
const BATCH = 2_000;

async function batched(
  n: number,
  size: number,
  fn: (from: number, to: number) => Promise<void>,
): Promise<void> {
  for (let from = 0; from < n; from += size) await fn(from, Math.min(n, from + size));
}

/** Migrates the database and seeds realm `bench`. */
export async function seedDatabase(url: string, rootKeyFile: string): Promise<SeedSummary> {
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

    // Clients: a mix of the five types; app-0500 (web) is the one the login scenario uses.
    const types = ['web', 'spa', 'native', 'service', 'web'] as const;
    const clientRows = Array.from({ length: CLIENTS }, (_, i) => {
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
    if (clientRows[500]?.clientId !== LOGIN_CLIENT_ID || !clientRows[500].redirect.includes(LOGIN_REDIRECT)) {
      throw new Error('seed: login client mismatch');
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
        clientRows.map((c) => c.id),
        clientRows.map((c) => c.clientId),
        clientRows.map((c) => c.type),
        clientRows.map((c) => c.redirect[0] ?? ''),
        clientRows.map((c) => c.grants.join(',')),
        clientRows.map((c) => c.auth),
      ],
    );

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
           idle_expires_at, absolute_expires_at, revoked_at, revoked_reason)
         select $1, s.id, s.uid, encode(sha256(convert_to(s.id, 'UTF8')), 'hex'),
                $2::timestamptz - make_interval(secs => s.age), '{pwd}', 'basic', false,
                $2::timestamptz - make_interval(secs => s.age), $2::timestamptz - make_interval(secs => s.age),
                case when s.live then $2::timestamptz + interval '30 minutes' else $2::timestamptz - make_interval(secs => s.age) + interval '30 minutes' end,
                case when s.live then $2::timestamptz + interval '12 hours' else $2::timestamptz - make_interval(secs => s.age) + interval '12 hours' end,
                case when s.live then null else $2::timestamptz - make_interval(secs => s.age) + interval '10 minutes' end,
                case when s.live then null else 'logout' end
           from unnest($3::text[], $4::text[], $5::int[], $6::boolean[]) as s(id, uid, age, live)`,
        [rid, now, ids, users, ages, live],
      );
    });

    await db.exec('analyze');
    const count = async (sql: string) =>
      Number((await db.query<{ n: string }>(`select count(*) as n from ${sql}`, [rid])).rows[0]?.n ?? 0);
    return {
      realm: REALM,
      realmId: rid,
      users: await count('users where realm_id = $1'),
      identifiers: await count('user_identifiers where realm_id = $1'),
      roleAssignments: await count('role_assignments where realm_id = $1'),
      clients: await count('clients where realm_id = $1'),
      sessions: await count('sessions where realm_id = $1'),
      hashMs,
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    await db.close();
  }
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
    const summary = await seedDatabase(cluster.url, rootKeyFile);
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
