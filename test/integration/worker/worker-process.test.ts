// `proudauth worker` as a real process with the default configuration (no listener of its own):
// it keeps running, keeps doing its periodic work as its clock moves on, and stops on SIGTERM; it
// refuses to start, as `proudauth dev` does, while the restore marker is set.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { addEvent } from '../../../src/events/outbox.repo.ts';
import type { Db } from '../../../src/platform/db/db.ts';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { Background, type Deployment, run, runProcess, scratchDeployment } from '../cli/cli-process.ts';
import { until } from '../faults/drill-kit.ts';

const SHIFTED_CLOCK = join(import.meta.dirname, '..', '..', 'harness', 'shifted-clock.ts');
const NEEDS_POSTGRES = TEST_DATABASE_URL
  ? false
  : 'the worker process and the test read one database at once, which the embedded database (one process) does not allow';

describe('worker › the process', { skip: NEEDS_POSTGRES }, () => {
  let dep: Deployment;
  let db: Db;
  before(async () => {
    dep = await scratchDeployment();
    const migrated = await run('proudauth', ['migrate'], { env: dep.env() });
    assert.equal(migrated.code, 0, migrated.stderr);
    db = openPostgres({ url: dep.databaseUrl as string, maxConns: 2, statementTimeoutMs: 30_000 });
  });
  after(async () => {
    await db?.close();
    await dep?.cleanup();
  });

  const leaseEnd = async (task: string): Promise<number | null> => {
    const r = await db.query<{ locked_until: Date }>(
      'select locked_until from worker_leases where name = $1',
      [task],
    );
    return r.rows[0] ? new Date(r.rows[0].locked_until).getTime() : null;
  };

  /** Writes an event as a request would, and waits for the worker to dispatch it. */
  const dispatched = async (what: string): Promise<void> => {
    const realm = await db.query<{ id: string }>('select id from realms limit 1');
    const realmId = realm.rows[0]?.id ?? 'rlm_none';
    const id = await db.tx((tx) =>
      addEvent(tx, {
        realmId,
        type: 'user.created',
        occurredAt: new Date(),
        data: { user_id: 'usr_worker_process', created_via: 'test' },
      }),
    );
    await until(what, 30_000, async () => {
      const r = await db.query('select 1 from outbox where id = $1 and dispatched_at is not null', [id]);
      return r.rows.length === 1 ? true : null;
    });
  };

  test('case=with the default configuration it keeps working a minute of its clock later, and SIGTERM stops it', async (t) => {
    const worker = new Background(
      'proudauth',
      ['worker'],
      dep.env({ PROUDAUTH_OBSERVABILITY_LOG_LEVEL: 'info' }),
      [SHIFTED_CLOCK],
    );
    t.after(() => worker.kill());
    await worker.waitFor(/"command":"worker"/);
    const first = await until('the first pass of keys.lifecycle', 30_000, () => leaseEnd('keys.lifecycle'));
    await dispatched('an event written after the first pass is dispatched');
    assert.ok(worker.running, 'still running after its first pass');

    worker.signal('SIGUSR2');
    await worker.waitFor(/shifted clock: \+60000 ms/, 10_000, 'stderr');
    // keys.lifecycle runs once a minute: it runs again only because a minute passed on the clock.
    await until('keys.lifecycle runs again a minute later', 30_000, async () => {
      const end = await leaseEnd('keys.lifecycle');
      return end !== null && end >= first + 60_000 ? end : null;
    });
    await dispatched('events are still dispatched a minute later');
    assert.ok(worker.running);

    const exit = await worker.stop('SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null }, worker.stderr);
    assert.match(worker.stdout, /shutdown: closed/);
  });
});

describe('worker › the process › restore marker', () => {
  test('case=worker and dev refuse to start while the restore marker is set', async (t) => {
    const dep = await scratchDeployment();
    t.after(() => dep.cleanup());
    const migrated = await run('proudauth', ['migrate'], { env: dep.env() });
    assert.equal(migrated.code, 0, migrated.stderr);
    await dep.withDb((d) =>
      d.query(`insert into restore_marker (marked_at, marked_by) values (now(), 'restore-begin')`),
    );
    for (const command of ['worker', 'dev']) {
      // A start refused in a process of its own: dev and worker never run in the test's process.
      const r = await runProcess('proudauth', [command], { env: dep.env() });
      assert.equal(r.code, 1, `${command}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /^proudauth: the restore marker is set: .*restore-reconcile/m, command);
      assert.doesNotMatch(r.stdout, /"command":"(worker|dev)"/, `${command} never logs that it started`);
    }
  });
});
