// The work-queue protocol (src/platform/work-queue) against the real queues that use it: jobs,
// notifications and webhook deliveries (leased claims) and the outbox (claims held by a
// transaction). Races run on PostgreSQL, where two workers' transactions really interleave; the
// first claim is held open at a chosen point so the interleaving does not depend on timing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { addEvent, OUTBOX_QUEUE } from '../../../src/events/outbox.repo.ts';
import { insertJob, JOB_QUEUE } from '../../../src/jobs/jobs.repo.ts';
import { insertNotification, NOTIFICATION_QUEUE } from '../../../src/notifications/notifications.repo.ts';
import type { Db, Tx } from '../../../src/platform/db/db.ts';
import { newId } from '../../../src/platform/ids.ts';
import {
  type ClaimedItem,
  claimForTransaction,
  type WorkQueue,
} from '../../../src/platform/work-queue/work-queue.ts';
import type { RealmRow } from '../../../src/realms/index.ts';
import { DELIVERY_QUEUE, insertDeliveries } from '../../../src/webhooks/deliveries.repo.ts';
import { insertSubscription } from '../../../src/webhooks/subscriptions.repo.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { holdOpen, untilLockWaiters } from '../../harness/held-transaction.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';

const MINUTE = 60_000;
const TABLES = ['jobs', 'notifications', 'webhook_deliveries', 'outbox'];

/** One real queue: how to add items to it (of an organization, or none). */
interface QueueUnderTest {
  name: string;
  queue: WorkQueue<ClaimedItem>;
  share?: number;
  /** Adds `n` items due from `at` on, a millisecond apart. */
  add(tx: Tx, realm: RealmRow, n: number, at: Date, org?: string | null): Promise<string[]>;
}

const QUEUES: QueueUnderTest[] = [
  {
    name: 'jobs',
    queue: JOB_QUEUE,
    share: 100,
    async add(tx, realm, n, now, org = null) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = newId('job', now.getTime() + i);
        await insertJob(
          tx,
          {
            realmId: realm.id,
            id,
            type: 'config.export',
            organizationId: org,
            requester: { type: 'system', id: null },
            permission: null,
            params: {},
            idempotencyKey: null,
            fingerprint: id,
          },
          new Date(now.getTime() + i),
        );
        ids.push(id);
      }
      return ids;
    },
  },
  {
    name: 'notifications',
    queue: NOTIFICATION_QUEUE,
    share: 100,
    async add(tx, realm, n, now, org = null) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = newId('ntf', now.getTime() + i);
        const row = { realmId: realm.id, id, channel: 'email', template: 'login_code', organizationId: org };
        await insertNotification(tx, { ...row, sealed: 'sealed' }, new Date(now.getTime() + i));
        ids.push(id);
      }
      return ids;
    },
  },
  {
    name: 'webhook deliveries',
    queue: DELIVERY_QUEUE,
    async add(tx, realm, n, now) {
      const subscription = newId('whk', now.getTime());
      await insertSubscription(
        tx,
        realm.id,
        {
          id: subscription,
          name: 'queue test',
          destinationUrl: 'https://hooks.example/x',
          eventTypes: ['*'],
          organizationId: null,
          payloadForm: 'minimal',
          eventVersion: 1,
          allowPrivateNetwork: false,
          state: 'active',
          ownerUserId: null,
          secretSealed: 'sealed',
        },
        now,
      );
      const ds = Array.from({ length: n }, (_, i) => ({
        realmId: realm.id,
        id: newId('whd', now.getTime() + i),
        subscriptionId: subscription,
        eventId: newId('obx', now.getTime() + i),
        eventType: 'user.created',
        eventVersion: 1,
        body: '{}',
      }));
      for (const [i, d] of ds.entries()) await insertDeliveries(tx, [d], new Date(now.getTime() + i));
      return ds.map((d) => d.id);
    },
  },
];

interface Fixture {
  h: Harness;
  db: Db;
  realm: RealmRow;
  /** When this test's items were queued: a minute before `now`, so all of them are due. */
  queuedAt: Date;
  now: Date;
}

async function fixture(t: TestContext): Promise<Fixture> {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  // Queues are drained deployment-wide: this test's items go with it, so no later test claims them.
  t.after(async () => {
    for (const table of TABLES) await h.ctx.db.query(`delete from ${table} where realm_id = $1`, [realm.id]);
    await h.ctx.db.query('delete from restore_marker');
  });
  const now = h.clock.now();
  return { h, db: h.ctx.db, realm, now, queuedAt: new Date(now.getTime() - MINUTE) };
}

const claimBy =
  (u: QueueUnderTest, holder: string, now: Date, limit: number) =>
  (tx: Tx): Promise<ClaimedItem[]> =>
    u.queue.claim(tx, { holder, now, leaseUntil: new Date(now.getTime() + MINUTE), limit, share: u.share });

const ids = (items: readonly ClaimedItem[]) => items.map((i) => i.id).sort();

describe('work queue › the protocol on the real queues', () => {
  for (const u of QUEUES) {
    test(`case=two workers never claim the same item/queue=${u.name}`, {
      skip: RACE_NEEDS_POSTGRES,
    }, async (t) => {
      const { db, realm, now, queuedAt } = await fixture(t);
      const all = await db.tx((tx) => u.add(tx, realm, 6, queuedAt));
      // Worker A's claim stays uncommitted while worker B claims; B must not wait for A nor take
      // what A holds (without the row locks B would block here, then claim A's items again).
      let first: ClaimedItem[] = [];
      const a = await holdOpen(db, async (tx) => {
        first = await claimBy(u, 'worker-a', now, 4)(tx);
      });
      const second = db.tx(claimBy(u, 'worker-b', now, 4));
      await Promise.race([second, untilLockWaiters(db, 1)]);
      await a.commit();
      const b = await second;
      // B took none of A's items (a queue with a fairness window may have found all of them locked);
      // once A has committed, the rest is still there to take.
      const rest = await db.tx(claimBy(u, 'worker-b', now, 10));
      const taken = [...first, ...b, ...rest].map((i) => i.id);
      assert.equal(first.length, 4);
      assert.deepEqual(taken.sort(), [...all].sort(), 'each item claimed once');
    });

    test(`case=a lease that runs out is taken over, and the first claim can no longer end/queue=${u.name}`, async (t) => {
      const { db, realm, now, queuedAt } = await fixture(t);
      const [item] = await db.tx((tx) => u.add(tx, realm, 1, queuedAt));
      const [a] = await db.tx(claimBy(u, 'worker-a', now, 10));
      assert.equal(a?.id, item);
      const almost = new Date(now.getTime() + MINUTE - 1);
      assert.deepEqual(await db.tx(claimBy(u, 'worker-b', almost, 10)), [], 'the lease holds until it ends');
      const [b] = await db.tx(claimBy(u, 'worker-b', new Date(now.getTime() + MINUTE), 10));
      assert.equal(b?.id, item, 'taken over when it ends');
      assert.equal(b?.attempts, 2, 'the crashed attempt counts');
      assert.equal(await db.tx((tx) => u.queue.lockClaimed(tx, a as ClaimedItem, 'worker-a')), null);
      assert.equal(
        await u.queue.renew(db, a as ClaimedItem, 'worker-a', new Date(now.getTime() + 2 * MINUTE)),
        false,
      );
      assert.equal((await db.tx((tx) => u.queue.lockClaimed(tx, b as ClaimedItem, 'worker-b')))?.id, item);
      // A later claim by the same worker is another claim: the earlier one cannot end it either.
      const later = new Date(now.getTime() + 2 * MINUTE);
      const [again] = await db.tx(claimBy(u, 'worker-b', later, 10));
      assert.equal(again?.attempts, 3);
      assert.equal(await db.tx((tx) => u.queue.lockClaimed(tx, b as ClaimedItem, 'worker-b')), null);
      assert.equal(
        (await u.queue.oldestDueSeconds(db, new Date(later.getTime() + MINUTE + 5000))) >= 5,
        true,
      );
    });

    test(`case=no claim takes anything while the restore marker is set/queue=${u.name}`, async (t) => {
      const { db, realm, now, queuedAt } = await fixture(t);
      await db.tx((tx) => u.add(tx, realm, 2, queuedAt));
      await db.query(`insert into restore_marker (marked_at, marked_by) values (now(), 'test')`);
      assert.deepEqual(await db.tx(claimBy(u, 'worker-a', now, 10)), []);
      await db.query('delete from restore_marker');
      assert.equal((await db.tx(claimBy(u, 'worker-a', now, 10))).length, 2);
    });
  }

  test('case=the outbox: a dispatch transaction holds its events; another takes the rest; none while the marker is set', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { db, realm, queuedAt } = await fixture(t);
    for (let i = 0; i < 6; i++)
      await db.tx((tx) =>
        addEvent(tx, {
          realmId: realm.id,
          type: 'user.created',
          occurredAt: new Date(queuedAt.getTime() + i),
          data: { user_id: `usr_${i}`, created_via: 'admin' },
        }),
      );
    const take = (tx: Tx) => claimForTransaction<{ id: string }>(tx, OUTBOX_QUEUE, 4);
    let first: { id: string }[] = [];
    const a = await holdOpen(db, async (tx) => {
      first = await take(tx);
    });
    const second = db.tx(take);
    await Promise.race([second, untilLockWaiters(db, 1)]);
    await a.commit();
    const b = await second;
    assert.equal(first.length, 4);
    assert.equal(b.length, 2);
    assert.equal(new Set([...first, ...b].map((e) => e.id)).size, 6);
    await db.query(`insert into restore_marker (marked_at, marked_by) values (now(), 'test')`);
    assert.deepEqual(await db.tx(take), []);
  });

  test('case=fairness/limit=leased: two workers together never lease more than the share of one organization', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { db, realm, now, queuedAt } = await fixture(t);
    const jobs = QUEUES[0] as QueueUnderTest;
    const orgA = `org_${randomBytes(4).toString('hex')}`;
    const orgB = `org_${randomBytes(4).toString('hex')}`;
    const later = (ms: number) => new Date(queuedAt.getTime() + ms);
    const burst = await db.tx((tx) => jobs.add(tx, realm, 4, queuedAt, orgA));
    const [small] = await db.tx((tx) => jobs.add(tx, realm, 1, later(10), orgB));
    const [realmWide] = await db.tx((tx) => jobs.add(tx, realm, 1, later(20), null));
    const leaseUntil = new Date(now.getTime() + MINUTE);
    const claim = (holder: string) => (tx: Tx) =>
      JOB_QUEUE.claim(tx, { holder, now, leaseUntil, limit: 3, share: 2 });
    // Worker A's claim is held open; worker B's claim must count what A leased, so it waits.
    let first: ClaimedItem[] = [];
    const a = await holdOpen(db, async (tx) => {
      first = await claim('worker-a')(tx);
    });
    const second = db.tx(claim('worker-b'));
    await Promise.race([second, untilLockWaiters(db, 1)]);
    await a.commit();
    const b = await second;
    assert.deepEqual(ids(first), [burst[0], burst[1], small].sort(), 'the oldest two of A, then B');
    assert.deepEqual(ids(b), [realmWide], 'A is at its share; realm-wide work is outside it');
    const leasedOfA = await db.query(
      `select count(*)::int as n from jobs where realm_id = $1 and organization_id = $2 and state = 'running'`,
      [realm.id, orgA],
    );
    assert.equal(leasedOfA.rows[0]?.n, 2);
  });

  test('case=fairness/limit=per_claim: one claim takes at most the share of one organization and the rest of the others', async (t) => {
    const { db, realm, now, queuedAt } = await fixture(t);
    const notifications = QUEUES[1] as QueueUnderTest;
    const later = (ms: number) => new Date(queuedAt.getTime() + ms);
    await db.tx((tx) => notifications.add(tx, realm, 12, queuedAt, 'org_burst'));
    const calm = await db.tx((tx) => notifications.add(tx, realm, 3, later(50), 'org_calm'));
    const unowned = await db.tx((tx) => notifications.add(tx, realm, 2, later(60), null));
    const leaseUntil = new Date(now.getTime() + MINUTE);
    const claimed = await db.tx((tx) =>
      NOTIFICATION_QUEUE.claim(tx, { holder: 'w', now, leaseUntil, limit: 10, share: 4 }),
    );
    const of = (org: string | null) =>
      claimed
        .filter((n) => n.organization_id === org)
        .map((n) => n.id)
        .sort();
    assert.equal(of('org_burst').length, 4, 'the burst gets its share');
    assert.deepEqual(of('org_calm'), [...calm].sort());
    assert.deepEqual(of(null), [...unowned].sort(), 'messages without an organization share per realm');
  });
});
