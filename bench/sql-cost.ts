// Database work per request, measured where machine load does not change the figures: for the hot
// token paths (client_credentials ES256 and RS256, introspection, a single RBAC decision) this
// seeds a private cluster as `npm run bench` does, sends N requests in process (Fastify inject,
// no sockets), and reads pg_stat_statements: statements, rows and shared buffers touched per
// request. It then logs one request of each path with auto_explain (ANALYZE, BUFFERS) and prints
// the plan of its heaviest statement. CPU per request (server process and PostgreSQL) is printed
// too, but unlike the rest it moves with the machine's load.
//
// usage: node --import tsx bench/sql-cost.ts [N]    (N requests per path, default 500)
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createContext, requireKeyring } from '../src/main/context.ts';
import { buildPublicApp } from '../src/main/http-server.ts';
import { createLogger } from '../src/platform/log.ts';
import {
  type BenchCredentials,
  basicAuth,
  benchConfig,
  CC_AUDIENCE,
  CC_SCOPE,
  HZ,
  REALM,
  REALM_ES,
  treeTicks,
  WORK_DIR,
} from './common.ts';
import { type DecisionInputs, seedDecisions } from './decisions.ts';
import { seedDatabase, startCluster, writeRootKey } from './seed.ts';
import { mintIntrospectionTokens } from './tokens.ts';

interface Path {
  key: string;
  method: 'POST';
  url: string;
  requests: { headers: Record<string, string>; payload: string }[];
  expect: string;
}

export interface PathCost {
  key: string;
  requests: number;
  statementsPerRequest: number;
  rowsPerRequest: number;
  buffersPerRequest: number;
  execMsPerRequest: number;
  serverCpuMsPerRequest: number;
  dbCpuMsPerRequest: number;
  statements: { calls: number; rows: number; buffers: number; meanMs: number; query: string }[];
  plan: string;
}

interface Kept {
  runDir: string;
  rootKeyFile: string;
  url: string;
  postmasterPid: number | null;
  creds: BenchCredentials;
  tokens: string[];
  decisions: DecisionInputs;
}

const N = Number(process.argv[2] ?? 500);

async function main(): Promise<void> {
  // SQL_COST_STATE=FILE: reuse a cluster an earlier run left running (SQL_COST_KEEP=1 writes FILE).
  const stateFile = process.env.SQL_COST_STATE;
  const reuse =
    stateFile && existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as Kept) : null;
  const runDir = reuse?.runDir ?? join(WORK_DIR, `sql-cost-${process.pid}`);
  const rootKeyFile = reuse?.rootKeyFile ?? writeRootKey(runDir);
  const cluster = reuse ? null : await startCluster(runDir);
  const keep = process.env.SQL_COST_KEEP === '1';
  const logFile = join(runDir, 'postgres.log');
  try {
    if (cluster && !cluster.sqlStats) throw new Error('needs the private cluster (pg_stat_statements)');
    const port = 0;
    let kept: Kept;
    if (reuse) kept = reuse;
    else if (cluster) {
      const { credentials } = await seedDatabase(cluster.url, rootKeyFile);
      const tokens = await mintIntrospectionTokens({
        databaseUrl: cluster.url,
        rootKeyFile,
        port,
        count: 500,
      });
      const decisions = await seedDecisions({
        databaseUrl: cluster.url,
        rootKeyFile,
        port,
        subjectTokens: tokens,
      });
      kept = {
        runDir,
        rootKeyFile,
        url: cluster.url,
        postmasterPid: cluster.postmasterPid,
        creds: credentials,
        tokens,
        decisions,
      };
      if (keep && stateFile) writeFileSync(stateFile, JSON.stringify(kept), { mode: 0o600 });
    } else throw new Error('no cluster');
    const { creds, tokens, decisions } = kept;
    const url = kept.url;
    // Read again: sql-instructions.ts restarts a kept cluster, which gives it a new postmaster.
    const pidFile = join(runDir, 'pgdata', 'postmaster.pid');
    const postmasterPid = existsSync(pidFile)
      ? Number(readFileSync(pidFile, 'utf8').split('\n')[0])
      : kept.postmasterPid;

    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`load 'auto_explain'`);
    await admin.query(`alter system set session_preload_libraries = 'auto_explain'`);
    await admin.query(`alter system set auto_explain.log_min_duration = -1`);
    await admin.query(`alter system set auto_explain.log_analyze = on`);
    await admin.query(`alter system set auto_explain.log_buffers = on`);
    await admin.query(`select pg_reload_conf()`);

    const config = benchConfig({ databaseUrl: url, rootKeyFile, port });
    const ctx = await createContext(config, { env: {}, log: createLogger('silent') });
    requireKeyring(ctx);
    const app = buildPublicApp(ctx);
    await app.ready();

    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const cc = (callers: typeof creds.ccRs256): Path['requests'] =>
      callers.map((c) => ({
        headers: { ...form, authorization: basicAuth(c) },
        payload: `grant_type=client_credentials&resource=${encodeURIComponent(CC_AUDIENCE)}&scope=${CC_SCOPE}`,
      }));
    const paths: Path[] = [
      {
        key: 'cc-es256',
        method: 'POST',
        url: `/realms/${REALM_ES}/oauth/token`,
        requests: cc(creds.ccEs256),
        expect: 'access_token',
      },
      {
        key: 'cc-rs256',
        method: 'POST',
        url: `/realms/${REALM}/oauth/token`,
        requests: cc(creds.ccRs256),
        expect: 'access_token',
      },
      {
        key: 'introspect',
        method: 'POST',
        url: `/realms/${REALM}/oauth/introspect`,
        requests: tokens.map((t) => ({
          headers: { ...form, authorization: basicAuth(creds.introspector) },
          payload: `token=${t}`,
        })),
        expect: '"active":true',
      },
      {
        key: 'decision',
        method: 'POST',
        url: `/api/v1/realms/${REALM}/authorization/check`,
        requests: decisions.single.map((b) => ({
          headers: { 'content-type': 'application/json', authorization: decisions.auth },
          payload: b,
        })),
        expect: '"allowed"',
      },
    ];

    // One request of each path is recorded statement by statement (text and parameters), so that
    // bench/sql-instructions.ts can replay them under callgrind in a single-user backend.
    const realQuery = ctx.db.query.bind(ctx.db);
    let recording: { text: string; values: unknown[] }[] | null = null;
    ctx.db.query = ((text: string, values?: unknown[]) => {
      recording?.push({ text, values: values ?? [] });
      return realQuery(text, values);
    }) as typeof ctx.db.query;
    const recorded: Record<string, { text: string; values: unknown[] }[]> = {};
    const results: PathCost[] = [];
    for (const path of paths) {
      if (process.env.PATHS && !process.env.PATHS.split(',').includes(path.key)) continue;
      const send = async (i: number) => {
        const r = path.requests[i % path.requests.length] as Path['requests'][number];
        const res = await app.inject({
          method: path.method,
          url: path.url,
          headers: r.headers,
          payload: r.payload,
        });
        if (res.statusCode >= 300 || !res.body.includes(path.expect))
          throw new Error(`${path.key}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      };
      for (let i = 0; i < 50; i++) await send(i); // warm: caches, named statements, JIT
      recording = [];
      await send(3);
      recorded[path.key] = recording;
      recording = null;
      await admin.query('select pg_stat_statements_reset()');
      const pgBefore = postmasterPid ? treeTicks([postmasterPid]) : 0;
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < N; i++) await send(i);
      const cpu = process.cpuUsage(cpu0);
      const pgTicks = postmasterPid ? treeTicks([postmasterPid]) - pgBefore : 0;
      const stats = (
        await admin.query<{
          query: string;
          calls: string;
          rows: string;
          buffers: string;
          mean: number;
          total: number;
        }>(
          `select query, calls, rows, shared_blks_hit + shared_blks_read as buffers,
                  mean_exec_time as mean, total_exec_time as total
             from pg_stat_statements
            where dbid = (select oid from pg_database where datname = current_database())
              and query not like '%pg_stat_statements%'
            order by total_exec_time desc`,
        )
      ).rows;
      const sum = (f: (s: (typeof stats)[number]) => number) => stats.reduce((a, s) => a + f(s), 0);
      // One request with auto_explain on: the plans of its statements land in the server log.
      const mark = readFileSync(logFile, 'utf8').length;
      await admin.query(`alter system set auto_explain.log_min_duration = 0`);
      await admin.query(`select pg_reload_conf()`);
      await new Promise((r) => setTimeout(r, 300));
      await send(N + 7);
      await admin.query(`alter system set auto_explain.log_min_duration = -1`);
      await admin.query(`select pg_reload_conf()`);
      const logged = readFileSync(logFile, 'utf8').slice(mark);
      const plans = logged.split(/\n(?=\S.*LOG:\s+duration:)/).filter((p) => p.includes('Query Text:'));
      const heaviest = plans
        .map((p) => ({ p, ms: Number(/duration: ([\d.]+) ms/.exec(p)?.[1] ?? 0) }))
        .sort((a, b) => b.ms - a.ms)[0];
      results.push({
        key: path.key,
        requests: N,
        statementsPerRequest: sum((s) => Number(s.calls)) / N,
        rowsPerRequest: sum((s) => Number(s.rows)) / N,
        buffersPerRequest: sum((s) => Number(s.buffers)) / N,
        execMsPerRequest: sum((s) => s.total) / N,
        serverCpuMsPerRequest: (cpu.user + cpu.system) / 1000 / N,
        dbCpuMsPerRequest: ((pgTicks / HZ) * 1000) / N,
        statements: stats.map((s) => ({
          calls: Number(s.calls),
          rows: Number(s.rows),
          buffers: Number(s.buffers),
          meanMs: s.mean,
          query: s.query.replace(/\s+/g, ' ').slice(0, 140),
        })),
        plan: heaviest
          ? heaviest.p
              .replace(
                /^.*Query Text:[\s\S]*?(?=\n\s*(Result|Nested|Hash|Index|Seq|Limit|Aggregate|Append|Sort|Subquery))/m,
                '',
              )
              .trim()
          : '',
      });
    }
    await app.close();
    await ctx.db.close();
    await admin.end();

    for (const r of results) {
      process.stdout.write(
        `\n## ${r.key}: ${r.statementsPerRequest.toFixed(2)} statements, ${r.rowsPerRequest.toFixed(2)} rows, ${r.buffersPerRequest.toFixed(1)} shared buffers, ${r.execMsPerRequest.toFixed(3)} ms executing per request; CPU per request (load-dependent) server ${r.serverCpuMsPerRequest.toFixed(3)} ms, PostgreSQL ${r.dbCpuMsPerRequest.toFixed(3)} ms\n`,
      );
      for (const s of r.statements)
        process.stdout.write(
          `  ${(s.calls / r.requests).toFixed(2)} calls  ${(s.rows / r.requests).toFixed(2)} rows  ${(s.buffers / Math.max(1, s.calls)).toFixed(1)} buf/call  ${s.meanMs.toFixed(3)} ms  ${s.query}\n`,
        );
      if (process.env.PLANS === '1') process.stdout.write(`\nplan of the heaviest statement:\n${r.plan}\n`);
    }
    process.stdout.write(`\n${JSON.stringify(results.map(({ statements, plan, ...rest }) => rest))}\n`);
    if (process.env.SQL_COST_RECORD)
      writeFileSync(
        process.env.SQL_COST_RECORD,
        JSON.stringify({ database: new URL(url).pathname.slice(1), recorded }),
        {
          mode: 0o600,
        },
      );
  } finally {
    if (cluster && !keep) {
      await cluster.stop();
      rmSync(runDir, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: unknown) => {
    process.stderr.write(`sql-cost: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  });
}
