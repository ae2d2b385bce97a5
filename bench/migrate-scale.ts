// 100,000 users through `identity-cli migrate-from --apply` (docs/migration.md, Scale): a synthetic
// source export made by bench/migration-exports.ts, the real identity-cli as a child process logged
// in to a harness server in this process, whose job runner plays the worker while the command
// polls. Reports the wall time of the command, the statements the service sent per user (requests
// and jobs together, counted at the Db interface) and the CPU time of the PostgreSQL backends of
// the scratch database per user. Progress (users imported so far) goes to stderr every 30 s.
//
// usage: node --import tsx bench/migration-exports.ts 100000 bench/.work/scale
//        BENCH_IMPORT_PG=postgres://postgres@127.0.0.1:5432/postgres \
//          node --import tsx bench/migrate-scale.ts bench/.work/scale/keycloak.json [keycloak]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobRunner } from '../src/jobs/index.ts';
import { JOB_TYPES, type WorkerDeps } from '../src/main/worker/tasks.ts';
import { workerDeps } from '../src/main/worker/worker.ts';
import { bootstrapAdministrator } from '../src/setup/bootstrap.service.ts';
import { EMAIL, login, PASSWORD } from '../test/harness/cli-operator-kit.ts';
import { startHarness } from '../test/harness/harness.ts';
import { childEnv, run } from '../test/integration/cli/cli-process.ts';
import { counted, openDatabase, type Stats } from './import-db.ts';

const FILE = process.argv[2];
const ADAPTER = process.argv[3] ?? 'keycloak';
// 500 Keycloak users with PBKDF2 credentials pass the default 256 KiB body limit; 250 stay below
const BATCH = process.env.BATCH ?? '250';
if (!FILE) throw new Error('usage: bench/migrate-scale.ts EXPORT.json [keycloak|zitadel|supertokens]');

const hooks: (() => unknown)[] = [];
const t = { after: (fn: () => unknown) => hooks.push(fn) } as unknown as TestContext;
const bench = await openDatabase('pa_bench_migrate');
const stats: Stats = { statements: 0, ms: 0 };
const config = mkdtempSync(join(tmpdir(), 'proudauth-scale-'));
let stop = false;
try {
  const h = await startHarness(t, { db: counted(bench.db, stats) });
  const realm = 'scale';
  await bootstrapAdministrator(
    { ...h.ctx, keyring: h.ctx.keyring as NonNullable<typeof h.ctx.keyring>, signingAlgorithm: 'RS256' },
    { realm, email: EMAIL, password: PASSWORD },
  );
  const env = childEnv({ XDG_CONFIG_HOME: config, HOME: config });
  const logged = await login(env, ['-realm', realm, '-email', EMAIL, '-server', h.publicUrl]);
  if (logged.code !== 0) throw new Error(`login: ${logged.stderr}`);
  const runner = new JobRunner<WorkerDeps>(workerDeps(h.ctx) as WorkerDeps, JOB_TYPES, { holder: 'scale' });
  const working = (async () => {
    while (!stop) if ((await runner.runNext()) === null) await sleep(100);
  })();
  const t0 = performance.now();
  const progress = setInterval(() => {
    void bench.db
      .query<{ n: number }>(
        `select count(*)::int as n from users u join realms r on r.id = u.realm_id where r.name = $1`,
        [realm],
      )
      .then((r) => {
        const s = (performance.now() - t0) / 1000;
        process.stderr.write(`${s.toFixed(0)} s: ${r.rows[0]?.n} users\n`);
      })
      .catch(() => {});
  }, 30_000);
  stats.statements = 0;
  stats.ms = 0;
  await bench.resetServerCpu();
  const report = join(config, 'report.json');
  const r = await run(
    'identity-cli',
    [
      'migrate-from',
      ADAPTER,
      '--input',
      FILE,
      '--source-system',
      `${ADAPTER}-scale`,
      ...(ADAPTER === 'zitadel' ? ['--source-version', 'v4'] : []),
      '--import-totp',
      '--trust-email-verification',
      '--verification-reason',
      'synthetic bench export',
      '--realm',
      realm,
      '--report',
      report,
      '--batch-size',
      BATCH,
      '--apply',
    ],
    { env, timeoutMs: 4 * 3600_000 },
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(progress);
  const cpu = await bench.serverCpuSeconds();
  stop = true;
  await working;
  const users = await bench.db.query<{ n: number }>(
    `select count(*)::int as n from users u join realms r on r.id = u.realm_id where r.name = $1`,
    [realm],
  );
  const n = Number(users.rows[0]?.n ?? 0) - 1; // less the administrator
  process.stdout.write(
    `${JSON.stringify(
      {
        database: bench.label,
        adapter: ADAPTER,
        exit_code: r.code,
        users: n,
        seconds: Number(seconds.toFixed(1)),
        batch_size: Number(BATCH),
        users_per_second: Math.round(n / seconds),
        statements_per_user: Number((stats.statements / n).toFixed(2)),
        db_client_ms_per_user: Number((stats.ms / n).toFixed(3)),
        postgres_cpu_ms_per_user: cpu === null ? null : Number(((cpu * 1000) / n).toFixed(3)),
        cli_tail: r.stderr.split('\n').slice(-4).join('\n'),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  stop = true;
  for (const fn of hooks.reverse()) await fn();
  await bench.drop();
  rmSync(config, { recursive: true, force: true });
}
