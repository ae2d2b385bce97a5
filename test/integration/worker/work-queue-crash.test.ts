// A worker process killed (SIGKILL) in the middle of an item: the item stays leased to it until the
// lease runs out, then another worker process takes it over. Played on a webhook delivery, the
// queue item a real worker naturally holds while it waits on the network (src/platform/work-queue).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { TEST_ROOT_KEY } from '../../harness/harness.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { Background, childEnv } from '../cli/cli-process.ts';
import { until } from '../faults/drill-kit.ts';
import { emit, setup, subscribe, type WebhookSetup } from '../webhooks/webhook-kit.ts';

const SHIFTED_CLOCK = join(import.meta.dirname, '..', '..', 'harness', 'shifted-clock.ts');
const NEEDS_POSTGRES = TEST_DATABASE_URL
  ? false
  : 'worker processes and the test share one database, which the embedded database (one process) does not allow';

interface DeliveryRow {
  state: string;
  attempts: number;
  locked_by: string | null;
}

async function workerEnv(s: WebhookSetup): Promise<NodeJS.ProcessEnv> {
  const name = (await s.h.ctx.db.query<{ n: string }>('select current_database() as n')).rows[0]?.n;
  const url = new URL(TEST_DATABASE_URL as string);
  url.pathname = `/${name}`;
  return childEnv({
    PROUDAUTH_DATABASE_URL: url.toString(),
    PROUDAUTH_KEYS_ROOT_1: TEST_ROOT_KEY,
    PROUDAUTH_KEYS_ACTIVE_VERSION: '1',
    PROUDAUTH_DELIVERY_EGRESS_ALLOWLIST: '127.0.0.1/32',
    PROUDAUTH_OBSERVABILITY_LOG_LEVEL: 'info',
  });
}

test('work queue › a worker killed mid-item loses it to another worker once its lease runs out', {
  skip: NEEDS_POSTGRES,
  timeout: 180_000,
}, async (t) => {
  const s = await setup(t);
  const sub = await subscribe(s, { destination_url: `http://127.0.0.1:${s.receiver.port}/hook` });
  const delivery = async (): Promise<DeliveryRow | undefined> =>
    (
      await s.h.ctx.db.query<DeliveryRow>(
        'select state, attempts, locked_by from webhook_deliveries where realm_id = $1 and subscription_id = $2',
        [s.realm.id, sub.id],
      )
    ).rows[0];
  // The receiver holds the first request open: worker A is mid-attempt when it dies.
  s.receiver.answer = () => {};
  const eventId = await emit(s, 'user.created', { user_id: 'usr_crash', created_via: 'admin' });
  const env = await workerEnv(s);

  const a = new Background('proudauth', ['worker'], env);
  t.after(() => a.kill());
  await until('worker A attempts the delivery', 60_000, () =>
    s.receiver.received.length === 1 ? true : null,
  );
  const leased = await delivery();
  assert.match(String(leased?.locked_by), /^wkr-/, 'leased to worker A');
  assert.equal(leased?.attempts, 1);
  a.kill();
  assert.deepEqual(await a.exited, { code: null, signal: 'SIGKILL' });

  s.receiver.answer = (_req, res) => {
    res.statusCode = 204;
    res.end();
  };
  const b = new Background('proudauth', ['worker'], env, [SHIFTED_CLOCK]);
  t.after(() => b.kill());
  await b.waitFor(/"command":"worker"/);
  // B is working (it dispatches a new event) yet leaves the leased delivery alone.
  const other = await emit(s, 'user.locked', { user_id: 'usr_crash', state: 'locked' });
  await until('worker B dispatches', 30_000, async () => {
    const r = await s.h.ctx.db.query('select 1 from outbox where id = $1 and dispatched_at is not null', [
      other,
    ]);
    return r.rows.length === 1 ? true : null;
  });
  assert.equal(s.receiver.received.length, 1, 'not taken over while the lease runs');
  assert.equal((await delivery())?.locked_by, leased?.locked_by);

  // The lease lasts delivery.webhook_timeout (10 s) plus 30 s: a minute on B's clock ends it.
  b.signal('SIGUSR2');
  await b.waitFor(/shifted clock: \+60000 ms/, 10_000, 'stderr');
  const done = await until('worker B takes the delivery over', 60_000, async () => {
    const d = await delivery();
    return d?.state === 'delivered' ? d : null;
  });
  assert.equal(done.attempts, 2, "the killed worker's attempt counts");
  assert.equal(done.locked_by, null);
  assert.equal(s.receiver.received.length, 2);
  assert.deepEqual(
    s.receiver.received.map((r) => r.headers['webhook-id']),
    [eventId, eventId],
    'the same event id both times',
  );
  assert.deepEqual(await b.stop('SIGTERM'), { code: 0, signal: null }, b.stderr);
});
