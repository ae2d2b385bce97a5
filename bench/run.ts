// The one benchmark command (`npm run bench`): private PostgreSQL cluster + seed, ProudAuth's public
// listener pinned to CPU 0, the oidc-provider peer beside it, bounded autocannon loads from CPU 1,
// one table row per run. Everything it starts is stopped on success, failure and Ctrl-C.
//
// env: D (seconds per run, default 15), QUICK=1 (3 s runs, short waits, one repeat),
//      REPEATS (runs at c=32, default 3), PEER=0 (skip the peer), BENCH_PG=shared (use the local
//      server at 127.0.0.1:5432 instead of a private cluster), KEEP_PG=1 (keep the data directory),
//      SCENARIOS (comma list of jwks, health, login; default all), PROFILE=1 (V8 CPU profile of the
//      server's main thread into the run directory, written when it stops).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  BENCH_DIR,
  freePort,
  NCPU,
  REALM,
  REPO_DIR,
  rssMiB,
  sleep,
  treeRssMiB,
  WORK_DIR,
  waitQuiet,
} from './common.ts';
import type { LtResult, Spec } from './lt.ts';
import { type Cluster, type SeedSummary, seedDatabase, startCluster, writeRootKey } from './seed.ts';

const QUICK = process.env.QUICK === '1';
const D = Number(process.env.D ?? (QUICK ? 3 : 15));
const WARMUP = QUICK ? 2 : 6;
const REPEATS = Math.max(1, Number(process.env.REPEATS ?? (QUICK ? 1 : 3)));
const QUIET_TRIES = QUICK ? 2 : 20;
const WANT_PEER = process.env.PEER !== '0';
const SERVER_CPU = '0';
const LOAD_CPU = '1';
const PEER_KIT = process.env.PEER_KIT ?? '/work/shared/bench-peer';
const FOREIGN_LIMIT = 0.15;
const SCENARIOS = new Set((process.env.SCENARIOS ?? 'jwks,health,login').split(',').map((x) => x.trim()));
const PROFILE = process.env.PROFILE === '1';

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const runDir = join(WORK_DIR, `run-${stamp}`);
const out = (s = '') => process.stdout.write(`${s}\n`);
const warnings: string[] = [];
const warn = (s: string) => {
  warnings.push(s);
  out(`WARNING: ${s}`);
};

// ---- children: every process this run starts, so none outlives it ------------------------------

const live = new Set<ChildProcess>();
let cluster: Cluster | null = null;

function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

async function stopChild(child: ChildProcess, graceMs = 6000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

function killAllNow(): void {
  for (const c of live) {
    try {
      if (c.pid) process.kill(c.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  cluster?.stopNow();
}
process.on('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    out(`\n${sig}: stopping everything this run started`);
    killAllNow();
    process.exit(130);
  });
}

/** Runs a bounded child to completion; killed if it overruns. */
function runChild(
  cmd: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = track(spawn(cmd, args, { cwd: REPO_DIR, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (b: Buffer) => {
      stdout += b;
    });
    child.stderr?.on('data', (b: Buffer) => {
      stderr += b;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const lastJson = <T>(text: string): T => {
  const line = text.trim().split('\n').filter(Boolean).pop();
  if (!line) throw new Error('no output');
  return JSON.parse(line) as T;
};

// ---- servers -------------------------------------------------------------------------------------

interface Server {
  name: string;
  pid: number;
  base: string;
  child: ChildProcess;
  idleRss: number;
}

async function waitHttp(url: string, child: ChildProcess, what: string, logFile: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}); see ${logFile}`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${what} did not become ready at ${url}; see ${logFile}`);
}

async function startServer(
  name: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  readyPath: string,
  port: number,
): Promise<Server> {
  const logFile = join(runDir, `${name}.log`);
  const fd = openSync(logFile, 'w');
  // taskset execs node, so the child's pid is the server's.
  const child = track(
    spawn('taskset', ['-c', SERVER_CPU, process.execPath, ...args], { cwd, env, stdio: ['ignore', fd, fd] }),
  );
  const base = `http://127.0.0.1:${port}`;
  await waitHttp(`${base}${readyPath}`, child, name, logFile);
  await sleep(1500);
  return {
    name,
    pid: child.pid as number,
    base,
    child,
    idleRss: rssMiB(child.pid as number)?.rss ?? Number.NaN,
  };
}

function preparePeer(): string | null {
  const dir = join(WORK_DIR, 'peer');
  try {
    mkdirSync(dir, { recursive: true });
    for (const f of ['server.mjs', 'package.json']) copyFileSync(join(PEER_KIT, f), join(dir, f));
    if (!existsSync(join(dir, 'node_modules', 'oidc-provider'))) {
      out('installing the oidc-provider peer (9.13.3) into bench/.work/peer ...');
      const r = spawnSync('npm', ['install', '--no-audit', '--no-fund'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 300_000,
      });
      if (r.status !== 0) throw new Error(`npm install failed: ${r.stderr?.slice(-500)}`);
    }
    return dir;
  } catch (e) {
    warn(`peer unavailable: ${(e as Error).message}`);
    return null;
  }
}

// ---- rows ------------------------------------------------------------------------------------------

interface Row {
  scenario: string;
  server: string;
  c: number;
  r: LtResult;
  rss: number | null;
  rssHwm: number | null;
  dbRss: number | null;
  quiet: { quiet: boolean; busyCores: number };
  reference?: { label: string; value: number; perCore: boolean };
  /** SQL statements the server ran per request (per sign-in for the login scenario), from pg_stat_statements. */
  sql: SqlStats | null;
}

const rows: Row[] = [];

interface SqlStats {
  calls: number;
  perRequest: number;
  execMsPerRequest: number;
  top: Array<{ calls: number; per_request: number; mean_ms: number; query: string }>;
}

let sqlClient: pg.Client | null = null;
const SQL_FILTER = `query not like '%pg_stat_statements%'`;

async function sqlReset(): Promise<void> {
  if (sqlClient) await sqlClient.query('select pg_stat_statements_reset()');
}

async function sqlRead(requests: number): Promise<SqlStats | null> {
  if (!sqlClient) return null;
  const all = await sqlClient.query<{ calls: string | null; ms: number | null }>(
    `select sum(calls)::bigint as calls, sum(total_exec_time) as ms from pg_stat_statements where ${SQL_FILTER}`,
  );
  const top = await sqlClient.query<{ calls: string; mean_ms: number; query: string }>(
    `select calls::bigint as calls, mean_exec_time as mean_ms, regexp_replace(query, '\\s+', ' ', 'g') as query
       from pg_stat_statements where ${SQL_FILTER} order by calls desc limit 40`,
  );
  const calls = Number(all.rows[0]?.calls ?? 0);
  const n = Math.max(1, requests);
  return {
    calls,
    perRequest: calls / n,
    execMsPerRequest: Number(all.rows[0]?.ms ?? 0) / n,
    top: top.rows.map((r) => ({
      calls: Number(r.calls),
      per_request: +(Number(r.calls) / n).toFixed(2),
      mean_ms: +r.mean_ms.toFixed(3),
      query: r.query.slice(0, 400),
    })),
  };
}

async function load(
  server: Server,
  scenario: string,
  spec: Omit<Spec, 'base' | 'serverPids' | 'dbPid' | 'label'>,
  opts: { warmup?: boolean } = {},
): Promise<Row> {
  const quiet = await waitQuiet(QUIET_TRIES);
  if (!quiet.quiet)
    warn(
      `machine not quiet before "${scenario}${opts.warmup ? ' (warm-up)' : ''}" c=${spec.c}: ${quiet.busyCores.toFixed(2)} cores busy after ${quiet.waitedS.toFixed(0)} s of waiting; ran anyway`,
    );
  const full: Spec = {
    ...spec,
    label: scenario,
    base: server.base,
    serverPids: [server.pid],
    dbPid: server.name === 'proudauth' ? (cluster?.postmasterPid ?? null) : null,
  };
  const ours = server.name === 'proudauth';
  if (ours) await sqlReset();
  const res = await runChild(
    'taskset',
    ['-c', LOAD_CPU, process.execPath, '--import', 'tsx', join(BENCH_DIR, 'lt.ts'), JSON.stringify(full)],
    (spec.d + 90) * 1000,
  );
  if (res.code !== 0)
    throw new Error(`load generator failed (${res.code}) for ${scenario}: ${res.stderr.slice(-2000)}`);
  const r = lastJson<LtResult>(res.stdout);
  const mem = rssMiB(server.pid);
  // Per sign-in: HTTP answers / 3 (start, identify, password), so the sign-ins still in flight at
  // the window's edges, whose statements ran, are counted for their completed steps.
  const sql = ours ? await sqlRead(spec.kind === 'login' ? r.http_total / 3 : r.req_total) : null;
  const row: Row = {
    scenario: opts.warmup ? `${scenario} (warm-up, not in table)` : scenario,
    server: server.name,
    c: spec.c,
    r,
    rss: mem?.rss ?? null,
    rssHwm: mem?.hwm ?? null,
    dbRss: full.dbPid ? treeRssMiB(full.dbPid) : null,
    quiet,
    sql,
  };
  out(`  ${formatLine(row)}`);
  if (r.foreign_cores > FOREIGN_LIMIT)
    warn(
      `"${row.scenario}" c=${spec.c}: other processes used ${r.foreign_cores} cores during the run (limit ${FOREIGN_LIMIT}); the row is kept and marked *`,
    );
  const bad = r.non2xx + r.errors + r.timeouts + r.unexpected;
  if (bad > 0)
    warn(
      `"${row.scenario}" c=${spec.c}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${r.unexpected} unexpected 2xx; status codes ${JSON.stringify(r.status_codes)}; samples ${JSON.stringify(r.unexpected_samples)}`,
    );
  if (!opts.warmup) rows.push(row);
  return row;
}

interface Bare {
  verify_s: number;
  cores: number;
  user_cores: number;
  sys_cores: number;
  cpu_ms_per_verify: number;
  lat_p50_ms: number;
  lat_max_ms: number;
  cap: number;
  memory_kib: number;
  t: number;
  p: number;
  failed: number;
}
const bares: Bare[] = [];

async function bareArgon(): Promise<Bare> {
  const quiet = await waitQuiet(QUIET_TRIES);
  if (!quiet.quiet)
    warn(
      `machine not quiet before the bare Argon2 run: ${quiet.busyCores.toFixed(2)} cores busy; ran anyway`,
    );
  const res = await runChild(
    'taskset',
    [
      '-c',
      SERVER_CPU,
      process.execPath,
      '--import',
      'tsx',
      join(BENCH_DIR, 'argon-bare.ts'),
      '--duration',
      String(D),
    ],
    (D + 90) * 1000,
  );
  if (res.code !== 0) throw new Error(`argon-bare failed: ${res.stderr.slice(-2000)}`);
  const b = lastJson<Bare>(res.stdout);
  if (b.failed) warn(`bare Argon2 verify: ${b.failed} verifications failed`);
  bares.push(b);
  out(
    `  argon2id verify (bare, CPU ${SERVER_CPU}, m=${b.memory_kib} KiB t=${b.t} p=${b.p}, cap ${b.cap}): ${b.verify_s}/s, ${b.cores} cores, ${b.cpu_ms_per_verify} CPU-ms/verify, p50 ${b.lat_p50_ms} ms`,
  );
  return b;
}

// ---- formatting ------------------------------------------------------------------------------------

const f0 = (x: number | null | undefined) =>
  x === null || x === undefined || Number.isNaN(x) ? '-' : Math.round(x).toLocaleString('en-US');
const f1 = (x: number | null | undefined) =>
  x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(1);
const f2 = (x: number | null | undefined) =>
  x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(2);
const perCore = (r: LtResult) => (r.server_cores > 0 ? r.req_s / r.server_cores : Number.NaN);

function formatLine(row: Row): string {
  const r = row.r;
  return `${row.scenario} c=${row.c}: ${f1(r.req_s)}/s p50 ${f1(r.lat_p50_ms)} p99 ${f1(r.lat_p99_ms)} ms, server ${f2(r.server_cores)} db ${f2(r.db_cores)} gen ${f2(r.loadgen_cores)} foreign ${f2(r.foreign_cores)} cores, ${f0(perCore(r))}/server core, non-2xx ${r.non2xx}, unexpected ${r.unexpected}, errors ${r.errors + r.timeouts}`;
}

const HEADER =
  '| scenario | c | req/s | p50 / p90 / p99 / max ms | server / db / loadgen / foreign cores | req/s per server core | CPU-ms/req server [event loop] (+db) | SQL stmts/req | RSS MiB (peak) | non-2xx / unexpected / errors | reference | ratio |';
const RULE = '|---|---|---|---|---|---|---|---|---|---|---|---|';

function tableRow(row: Row): string {
  const r = row.r;
  const mark = r.foreign_cores > FOREIGN_LIMIT ? ' *' : '';
  const cpuMs = r.req_s > 0 ? (r.server_cores * 1000) / r.req_s : Number.NaN;
  const loopMs = r.req_s > 0 ? (r.server_main_cores * 1000) / r.req_s : Number.NaN;
  const dbMs = r.db_cores !== null && r.req_s > 0 ? (r.db_cores * 1000) / r.req_s : null;
  const ref = row.reference;
  const mine = ref?.perCore ? perCore(r) : r.req_s;
  return `| ${row.scenario}${mark} | ${row.c} | ${f1(r.req_s)} | ${f1(r.lat_p50_ms)} / ${f1(r.lat_p90_ms)} / ${f1(r.lat_p99_ms)} / ${f1(r.lat_max_ms)} | ${f2(r.server_cores)} / ${f2(r.db_cores)} / ${f2(r.loadgen_cores)} / ${f2(r.foreign_cores)} | ${f0(perCore(r))} | ${f2(cpuMs)} [${f2(loopMs)}]${dbMs === null ? '' : ` (+${f2(dbMs)})`} | ${row.sql ? f1(row.sql.perRequest) : '-'} | ${f0(row.rss)} (${f0(row.rssHwm)}) | ${r.non2xx} / ${r.unexpected} / ${r.errors + r.timeouts} | ${ref ? `${ref.label} ${ref.perCore ? f0(ref.value) : f1(ref.value)}` : '-'} | ${ref ? f2(mine / ref.value) : '-'} |`;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)] as number) : Number.NaN;
};

// ---- main ------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  mkdirSync(runDir, { recursive: true });
  // The runner itself stays off the server's core.
  spawnSync('taskset', ['-a', '-p', '-c', LOAD_CPU, String(process.pid)], { stdio: 'ignore' });
  out(
    `ProudAuth bench ${QUICK ? '(QUICK smoke: 3 s runs, not for figures) ' : ''}D=${D}s warm-up=${WARMUP}s repeats@c32=${REPEATS} cpus=${NCPU} node ${process.version}`,
  );
  out(`run directory: ${runDir}`);
  const tSeed = Date.now();
  const rootKeyFile = writeRootKey(runDir);
  cluster = await startCluster(runDir, LOAD_CPU);
  out(`database: ${cluster.description}`);
  if (cluster.sqlStats) {
    sqlClient = new pg.Client({ connectionString: cluster.url, application_name: 'bench-runner' });
    await sqlClient.connect();
  }
  const seed: SeedSummary = await seedDatabase(cluster.url, rootKeyFile);
  out(
    `seeded realm "${seed.realm}": ${seed.users} users (${seed.identifiers} identifiers, one shared Argon2id verifier hashed in ${seed.hashMs} ms), ${seed.roleAssignments} role assignments, ${seed.clients} clients, ${seed.sessions} sessions in ${((Date.now() - tSeed) / 1000).toFixed(1)} s (cluster + seed)`,
  );

  const servers: Server[] = [];
  try {
    const port = await freePort();
    const ours = await startServer(
      'proudauth',
      [
        ...(PROFILE ? ['--cpu-prof', '--cpu-prof-dir', join(runDir, 'profile')] : []),
        '--import',
        'tsx',
        join(BENCH_DIR, 'server.ts'),
        '--database-url',
        cluster.url,
        '--root-key-file',
        rootKeyFile,
        '--port',
        String(port),
      ],
      REPO_DIR,
      process.env,
      '/health/ready',
      port,
    );
    servers.push(ours);
    out(
      `proudauth listening on ${ours.base} (pid ${ours.pid}, CPU ${SERVER_CPU}), idle RSS ${f0(ours.idleRss)} MiB`,
    );

    let peer: Server | null = null;
    const peerDir = WANT_PEER ? preparePeer() : null;
    if (peerDir) {
      const peerPort = await freePort();
      try {
        peer = await startServer(
          'oidc-provider',
          ['server.mjs'],
          peerDir,
          { ...process.env, PORT: String(peerPort), ADAPTER: 'memory' },
          '/.well-known/openid-configuration',
          peerPort,
        );
        servers.push(peer);
        out(
          `oidc-provider peer listening on ${peer.base} (pid ${peer.pid}, CPU ${SERVER_CPU}), idle RSS ${f0(peer.idleRss)} MiB`,
        );
      } catch (e) {
        warn(`peer did not start: ${(e as Error).message}`);
      }
    } else if (!WANT_PEER) out('peer skipped (PEER=0)');

    const jwks = `/realms/${REALM}/jwks`;
    const cs = [16, ...Array.from({ length: REPEATS }, () => 32), 64];
    const jwksRuns: Array<{ c: number; ours: Row; peer: Row | null }> = [];
    if (SCENARIOS.has('jwks')) {
      out('\nJWKS warm-up');
      await load(
        ours,
        `proudauth GET ${jwks}`,
        { kind: 'get', path: jwks, c: 32, d: WARMUP },
        { warmup: true },
      );
      if (peer) {
        await load(
          peer,
          'oidc-provider GET /jwks',
          { kind: 'get', path: '/jwks', c: 32, d: WARMUP },
          { warmup: true },
        );
      }
      out('JWKS (ours and the peer alternate at each c)');
      for (const c of cs) {
        const o = await load(ours, `proudauth GET ${jwks}`, { kind: 'get', path: jwks, c, d: D });
        const p = peer
          ? await load(peer, 'oidc-provider GET /jwks', { kind: 'get', path: '/jwks', c, d: D })
          : null;
        if (p) o.reference = { label: 'peer/core', value: perCore(p.r), perCore: true };
        jwksRuns.push({ c, ours: o, peer: p });
      }
    }
    if (peer) {
      const last = rows.filter((r) => r.server === 'oidc-provider').pop();
      await stopChild(peer.child);
      out(`peer stopped (RSS after its last run ${f0(last?.rss)} MiB)`);
    }

    if (SCENARIOS.has('health')) {
      out('\nhealth (reference)');
      await load(ours, 'proudauth GET /health/ready', { kind: 'get', path: '/health/ready', c: 32, d: D });
    }

    const loginRows: Row[] = [];
    let bareRate = Number.NaN;
    if (SCENARIOS.has('login')) {
      out('\npassword step (start + identify + password per sign-in; the password step is measured)');
      const bareBefore = await bareArgon();
      await load(
        ours,
        'proudauth sign-in password step',
        { kind: 'login', c: 16, d: WARMUP },
        { warmup: true },
      );
      for (const c of cs) {
        loginRows.push(await load(ours, 'proudauth sign-in password step', { kind: 'login', c, d: D }));
      }
      const bareAfter = await bareArgon();
      bareRate = (bareBefore.verify_s + bareAfter.verify_s) / 2;
      for (const row of loginRows)
        row.reference = { label: 'bare verify/s', value: bareRate, perCore: false };
    }
    const idle = rssMiB(ours.pid);

    // ---- table ----
    const lines: string[] = [];
    lines.push(HEADER, RULE);
    for (const row of rows) lines.push(tableRow(row));
    for (const b of bares) {
      lines.push(
        `| argon2id verify, bare (m=${b.memory_kib} KiB t=${b.t} p=${b.p}, cap ${b.cap}, CPU ${SERVER_CPU}) | ${b.cap} | ${f1(b.verify_s)} | ${f1(b.lat_p50_ms)} / - / - / ${f1(b.lat_max_ms)} | ${f2(b.cores)} / - / - / - | ${f1(b.verify_s / Math.max(b.cores, 1e-9))} | ${f1(b.cpu_ms_per_verify)} | - | - | ${b.failed} / - / - | - | - |`,
      );
    }
    const summary: string[] = [];
    const sqlDetail: string[] = [];
    const med = (xs: Row[], f: (r: Row) => number) => median(xs.map(f));
    if (jwksRuns.length) {
      const ours32 = jwksRuns.filter((j) => j.c === 32);
      const oursJwksPerCore = med(
        ours32.map((j) => j.ours),
        (r) => perCore(r.r),
      );
      const peer32 = ours32.map((j) => j.peer).filter((p): p is Row => p !== null);
      const peerJwksPerCore = peer32.length ? med(peer32, (r) => perCore(r.r)) : Number.NaN;
      summary.push(
        `JWKS c=32 median of ${ours32.length}: ${f0(oursJwksPerCore)} req/s per server core (target >= 20,000: ${oursJwksPerCore >= 20_000 ? 'MET' : 'NOT MET'})` +
          (peer32.length
            ? `; peer oidc-provider ${f0(peerJwksPerCore)}/core; ratio ${f2(oursJwksPerCore / peerJwksPerCore)}`
            : '; no peer run'),
      );
    }
    if (loginRows.length) {
      const login32 = loginRows.filter((r) => r.c === 32);
      const loginRate = med(login32, (r) => r.r.req_s);
      const loginP50 = med(login32, (r) => r.r.lat_p50_ms);
      const minP50 = Math.min(...loginRows.map((r) => r.r.lat_p50_ms));
      summary.push(
        `password step c=32 median of ${login32.length}: ${f1(loginRate)} sign-ins/s vs bare Argon2id verify ${f1(bareRate)}/s (${bares.map((b) => f1(b.verify_s)).join(' before, ')} after) = ${f2(loginRate / bareRate)} (target >= 0.90: ${loginRate / bareRate >= 0.9 ? 'MET' : 'NOT MET'}); p50 ${f1(loginP50)} ms, lowest p50 of any login run ${f1(minP50)} ms (target >= 250: ${minP50 >= 250 ? 'MET' : 'NOT MET'})`,
      );
      // Breakdown from the c=32 run with the median rate.
      const mid = [...login32].sort((a, b) => a.r.req_s - b.r.req_s)[
        Math.floor((login32.length - 1) / 2)
      ] as Row;
      const per = (cores: number) => (cores * 1000) / mid.r.req_s;
      const threads = mid.r.server_threads;
      const mainT = threads.find((t) => t.main) ?? { user: 0, sys: 0 };
      const pool = threads.filter((t) => !t.main).slice(0, 4);
      const poolUser = pool.reduce((a, t) => a + t.user, 0);
      const poolSys = pool.reduce((a, t) => a + t.sys, 0);
      const others = threads.filter((t) => !t.main).slice(4);
      const otherCores = others.reduce((a, t) => a + t.user + t.sys, 0);
      const bareUser = median(bares.map((b) => (b.user_cores * 1000) / b.verify_s));
      const bareSys = median(bares.map((b) => (b.sys_cores * 1000) / b.verify_s));
      summary.push(
        `where the server's CPU goes per sign-in (c=${mid.c}, ${f1(mid.r.req_s)}/s): ${f1(per(mid.r.server_cores))} CPU-ms in all = event loop ${f1(per(mainT.user + mainT.sys))} (user ${f1(per(mainT.user))}, sys ${f1(per(mainT.sys))}) + the 4 busiest other threads, i.e. the libuv pool running Argon2id, ${f1(per(poolUser + poolSys))} (user ${f1(per(poolUser))}, sys ${f1(per(poolSys))}) + ${others.length} more threads (V8 GC/compiler) ${f1(per(otherCores))}; a bare verify costs ${f1(bareUser + bareSys)} (user ${f1(bareUser)}, sys ${f1(bareSys)}); PostgreSQL ${f1(mid.r.db_cores === null ? Number.NaN : per(mid.r.db_cores))} CPU-ms${mid.sql ? ` for ${f1(mid.sql.perRequest)} SQL statements (${f2(mid.sql.execMsPerRequest)} ms executing)` : ''}`,
      );
      if (mid.sql) {
        sqlDetail.push(
          `SQL statements per sign-in (c=${mid.c} run, pg_stat_statements: ${mid.sql.calls} calls over ${mid.r.http_total} HTTP answers = ${f1(mid.r.http_total / 3)} sign-ins' worth of steps):`,
          '',
          '| per sign-in | mean ms | statement |',
          '|---|---|---|',
          ...mid.sql.top
            .filter((t) => t.per_request >= 0.05)
            .map(
              (t) =>
                `| ${t.per_request.toFixed(2)} | ${t.mean_ms.toFixed(3)} | \`${t.query.slice(0, 140).replace(/\|/g, '\\|')}\` |`,
            ),
        );
      }
    }
    const totalBad = rows.reduce((a, r) => a + r.r.non2xx + r.r.unexpected + r.r.errors + r.r.timeouts, 0);
    summary.push(
      `correctness: ${totalBad} unexpected non-2xx / unexpected bodies / errors over all table runs (target 0: ${totalBad === 0 ? 'MET' : 'NOT MET'})`,
    );
    summary.push(
      `memory: proudauth idle RSS ${f0(ours.idleRss)} MiB at start (target <= 150: ${ours.idleRss <= 150 ? 'MET' : 'NOT MET'}), ${f0(idle?.rss)} MiB after the runs, peak ${f0(idle?.hwm)} MiB${peer ? `; peer idle ${f0(peer.idleRss)} MiB` : ''}`,
    );
    const foreign = rows.filter((r) => r.r.foreign_cores > FOREIGN_LIMIT);
    summary.push(
      foreign.length
        ? `foreign load > ${FOREIGN_LIMIT} core in ${foreign.length} of ${rows.length} runs (marked *): kept, not discarded`
        : `foreign load <= ${FOREIGN_LIMIT} core in every run`,
    );

    const report = [
      `ProudAuth bench, ${new Date().toISOString()}, ${QUICK ? 'QUICK smoke' : `D=${D}s`}, node ${process.version}, ${NCPU} CPUs; server on CPU ${SERVER_CPU}, load generator and PostgreSQL on CPU ${LOAD_CPU}`,
      `database: ${cluster.description}`,
      '',
      ...lines,
      '',
      ...summary.map((s) => `- ${s}`),
      ...(sqlDetail.length ? ['', ...sqlDetail] : []),
      ...(warnings.length ? ['', 'warnings:', ...warnings.map((w) => `- ${w}`)] : []),
    ].join('\n');
    out(`\n${report}`);
    writeFileSync(join(runDir, 'report.md'), `${report}\n`);
    writeFileSync(join(runDir, 'results.json'), JSON.stringify({ seed, rows, bares, warnings }, null, 2));
    writeFileSync(join(WORK_DIR, QUICK ? 'last-quick-report.md' : 'last-report.md'), `${report}\n`);
  } finally {
    await sqlClient?.end().catch(() => {});
    sqlClient = null;
    for (const s of servers) await stopChild(s.child);
    await cluster.stop();
    cluster = null;
    out(
      `\nstopped: ${servers.map((s) => `${s.name} (pid ${s.pid})`).join(', ')}, PostgreSQL; logs in ${runDir}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench failed: ${(e as Error).stack ?? e}\n`);
    process.exitCode = 1;
    // The finally in main already stopped servers and PostgreSQL; the exit handler catches the rest.
    process.exit(1);
  },
);
