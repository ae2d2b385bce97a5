// Fault drill (issue #10): PostgreSQL restarted under running `proudauth serve` and `proudauth
// worker` processes. The drill owns its database: a private cluster (initdb in a temporary
// directory, its own port on 127.0.0.1), migrated and seeded like the other drills, with the
// processes connected to it directly. Under bounded load through the hot paths (sign-in to a
// redeemed code included) it runs `pg_ctl restart -m fast`, then stops the cluster, checks that
// readiness, /status and metrics say the database is down, and starts it again. The same promises
// as database-faults.test.ts: no 500, no process exit, 503 with Retry-After while the database is
// away, recovery within seconds, no outbox event lost or duplicated, refresh tokens and codes
// spent at most once, and health telling the truth during and after.
import { test } from 'node:test';
import type { Db } from '../../../src/platform/db/db.ts';
import { migrate } from '../../../src/platform/db/migrate.ts';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import {
  type PrivateCluster,
  privateClusterUnavailable,
  startPrivateCluster,
} from '../../harness/pg-cluster.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import {
  assertReportedDown,
  checkAfterFaults,
  Drills,
  type Services,
  sleep,
  startServices,
  until,
} from './drill-kit.ts';
import { DrillLoad } from './drill-load.ts';
import { seedDrill } from './drill-seed.ts';

function skipReason(): string | false {
  if (!TEST_DATABASE_URL)
    return 'the restart drill runs with the PostgreSQL test run (PROUDAUTH_TEST_DATABASE_URL is unset): the embedded database cannot be restarted under a process';
  const missing = privateClusterUnavailable();
  return missing ? `the restart drill needs a private PostgreSQL cluster: ${missing}` : false;
}

/** How long the database stays stopped in the stop-and-start drill (health is checked meanwhile). */
const DOWN_MS = 1500;

test('PostgreSQL restarted under running serve and worker processes', {
  skip: skipReason(),
  timeout: 300_000,
}, async (t) => {
  let cluster: PrivateCluster | null = null;
  let db: Db | null = null;
  let services: Services | null = null;
  let load: DrillLoad | null = null;
  // One clean-up, in order: the load and the processes, then the database, then the cluster and
  // its directory (after hooks run in the order they were added, so this one does it all).
  t.after(async () => {
    await load?.stop();
    services?.kill();
    await db?.close().catch(() => {});
    await cluster?.destroy();
  });
  const began = Date.now();
  cluster = await startPrivateCluster();
  const admin = openPostgres({ url: cluster.url('postgres'), maxConns: 1, statementTimeoutMs: 30_000 });
  try {
    await admin.query('create database proudauth_drill');
  } finally {
    await admin.close();
  }
  const url = cluster.url('proudauth_drill');
  db = openPostgres({ url, maxConns: 5, statementTimeoutMs: 30_000 });
  await migrate(db);
  const seed = await seedDrill(t, 8, { db });
  services = await startServices(t, seed, url);
  const s = services;
  const c = cluster;

  load = new DrillLoad(s.publicUrl, seed);
  const l = load;
  l.start(4);
  const started = Date.now();
  await until('every hot path answers before any fault', 30_000, () => l.recoveredAt(started));
  const drills = new Drills(l, s);
  const faultsFrom = Date.now();

  await t.test('pg_ctl restart -m fast under load', () =>
    drills.run('restart -m fast', () => c.restart('fast')),
  );

  await t.test(`pg_ctl stop -m fast, ${DOWN_MS} ms down (health, status and metrics say so), start`, () =>
    drills.run('stop, start', async () => {
      await c.stop('fast');
      const down = Date.now();
      try {
        await assertReportedDown(s);
        await sleep(Math.max(0, DOWN_MS - (Date.now() - down)));
      } finally {
        await c.start();
      }
    }),
  );

  await l.stop();
  t.diagnostic(
    JSON.stringify({
      setup_s: (faultsFrom - began) / 1000,
      faults_s: (Date.now() - faultsFrom) / 1000,
      drills: drills.report,
      codes: l.codeReport(),
    }),
  );
  await checkAfterFaults(t, { load: l, seed, services: s });
});
