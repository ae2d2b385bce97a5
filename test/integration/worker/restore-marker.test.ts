// A running worker and the restore marker (document 2, Restore marker): once the marker appears the
// worker starts no task, so no queue item is claimed; it takes work again once the marker is gone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addEvent } from '../../../src/events/outbox.repo.ts';
import { startWorker } from '../../../src/main/worker/worker.ts';
import { startHarness } from '../../harness/harness.ts';

describe('worker › restore marker', () => {
  test('case=a running worker takes no work while the marker is set, and takes it again once cleared', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const worker = startWorker(h.ctx, { autostart: false });
    t.after(() => worker.stop());
    const db = h.ctx.db;
    const event = () =>
      db.tx((tx) =>
        addEvent(tx, {
          realmId: realm.id,
          type: 'user.created',
          occurredAt: h.clock.now(),
          data: { user_id: 'usr_marker', created_via: 'admin' },
        }),
      );
    const isDispatched = async (id: string) =>
      (await db.query('select 1 from outbox where id = $1 and dispatched_at is not null', [id])).rows
        .length === 1;

    const before = await event();
    await worker.scheduler.tick();
    assert.equal(await isDispatched(before), true, 'the worker works before the marker');

    await db.query(`insert into restore_marker (marked_at, marked_by) values (now(), 'restore-begin')`);
    const during = await event();
    h.clock.advance(3_600_000); // every task is due again
    await worker.scheduler.tick();
    assert.equal(await isDispatched(during), false, 'nothing is taken while the marker is set');

    await db.query('delete from restore_marker');
    h.clock.advance(1_000);
    await worker.scheduler.tick();
    assert.equal(await isDispatched(during), true, 'work resumes once the marker is cleared');
  });
});
