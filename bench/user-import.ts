// Time and database cost of importing users through the API (docs/migration.md, Scale): N users
// (default 10,000) posted to POST /user-imports in batches of 500 (the migration batch default;
// 1000 of these records would pass the 256 KiB body limit), each batch's user.import job run by
// the worker's job runner in this process right after, as `identity-cli migrate-from` polls.
// Every user has an email, a display name, a bcrypt verifier, a membership with one role and two
// imported audit records; every fifth a TOTP seed. The database work is counted at the Db
// interface: statements and their client-side time, for the requests and the jobs together.
//
// usage: node --import tsx bench/user-import.ts [N]
//        BENCH_IMPORT_PG=postgres://postgres@127.0.0.1:5432/postgres ... for PostgreSQL (a scratch
//        database is created there and dropped after); embedded PGlite otherwise.
import type { TestContext } from 'node:test';
import { JobRunner } from '../src/jobs/index.ts';
import { JOB_TYPES, type WorkerDeps } from '../src/main/worker/tasks.ts';
import { workerDeps } from '../src/main/worker/worker.ts';
import { apiCaller } from '../test/harness/api-kit.ts';
import { startHarness } from '../test/harness/harness.ts';
import { counted, openDatabase, type Stats } from './import-db.ts';

const N = Number(process.argv[2] ?? 10_000);
const BATCH = Number(process.env.BATCH ?? 500);
const BCRYPT = '$2b$06$5NVu31/gg6yxzvg8HTmKP.5ThndqqRGlmOdL3zjx6tPcasCKdbBLO';

function record(i: number, org: string) {
  const n = String(i).padStart(6, '0');
  return {
    source_id: `kc-${n}`,
    identifiers: [{ type: 'email', value: `user${n}@example.com`, verified: true }],
    display_name: `User ${n}`,
    password: { format: 'bcrypt', hash: BCRYPT },
    ...(i % 5 === 0 ? { totp: { secret: 'JBSWY3DPEHPK3PXPJBSWY3DP', encoding: 'base32' } } : {}),
    memberships: [{ organization_slug: org, roles: ['member'] }],
    audit_events: [
      { event_type: 'LOGIN', occurred_at: '2025-01-01T00:00:00Z', outcome: 'success' },
      { event_type: 'LOGOUT', occurred_at: '2025-01-01T01:00:00Z', outcome: 'success' },
    ],
  };
}

/**
 * A request, sent again when the connection was reset: a keep-alive socket the server closed while
 * a job ran. Safe to repeat: the import requests carry an Idempotency-Key.
 */
async function send(call: () => Promise<Response>): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= 3 || !(e instanceof TypeError)) throw e;
    }
  }
}

const hooks: (() => unknown)[] = [];
const t = { after: (fn: () => unknown) => hooks.push(fn) } as unknown as TestContext;

const { db: raw, drop, label } = await openDatabase();
const stats: Stats = { statements: 0, ms: 0 };
try {
  const { createLogger } = await import('../src/platform/log.ts');
  const h = await startHarness(t, {
    db: counted(raw, stats),
    ...(process.env.BENCH_LOG ? { log: createLogger('info') } : {}),
  });
  const realm = await h.createRealm('bench-import');
  const admin = await apiCaller(h, realm);
  const org = await admin.call('POST', '/organizations', { slug: 'bench', display_name: 'Bench' });
  if (org.status !== 201) throw new Error(`organization: ${org.status}`);
  const runner = new JobRunner<WorkerDeps>(workerDeps(h.ctx) as WorkerDeps, JOB_TYPES, { holder: 'bench' });
  stats.statements = 0;
  stats.ms = 0;
  const t0 = performance.now();
  let bodyBytes = 0;
  for (let start = 0; start < N; start += BATCH) {
    const users = Array.from({ length: Math.min(BATCH, N - start) }, (_, k) => record(start + k, 'bench'));
    const doc = {
      format: 'service.user-import.v1',
      source_system: 'keycloak-bench',
      import_totp: true,
      users,
    };
    const text = JSON.stringify(doc);
    bodyBytes = Math.max(bodyBytes, Buffer.byteLength(text));
    const res = await send(() =>
      admin.call('POST', '/user-imports', text, { 'idempotency-key': `bench-${start}` }),
    );
    if (res.status !== 202) throw new Error(`batch ${start}: ${res.status} ${await res.text()}`);
    const ends = await runner.runDue(1);
    if (ends.succeeded !== 1) throw new Error(`batch ${start}: ${JSON.stringify(ends)}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  const check = await send(() =>
    admin.call(
      'GET',
      `/user-imports/reconciliation?source_system=keycloak-bench&expected_users=${N}&expected_memberships=${N}&expected_password_verifiers=${N}&expected_totp_factors=${Math.ceil(N / 5)}`,
    ),
  );
  const rec = (await check.json()) as { matches: boolean };
  const out = {
    database: label,
    users: N,
    batch: BATCH,
    largest_body_kib: Math.round(bodyBytes / 1024),
    seconds: Number(seconds.toFixed(1)),
    users_per_second: Math.round(N / seconds),
    statements_per_user: Number((stats.statements / N).toFixed(2)),
    db_ms_per_user: Number((stats.ms / N).toFixed(3)),
    reconciliation_matches: rec.matches,
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
} finally {
  for (const fn of hooks.reverse()) await fn();
  await drop();
}
