// Worker tasks outbox.dispatch and outbox.cleanup over the outbox table.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addEvent } from '../../../src/events/outbox.repo.ts';
import { cleanupOutbox, dispatchOutbox } from '../../../src/events/outbox-dispatch.task.ts';
import type { Db } from '../../../src/platform/db/db.ts';
import { startHarness } from '../../harness/harness.ts';
import { DAY, ms, SECOND } from '../keys/key-helpers.ts';

async function addUserCreated(db: Db, realmId: string, occurredAt: Date): Promise<string> {
  return db.tx((tx) =>
    addEvent(tx, {
      realmId,
      type: 'user.created',
      occurredAt,
      data: { user_id: `usr_${occurredAt.getTime()}`, created_via: 'test' },
    }),
  );
}

const rowsOf = async (db: Db, realmId: string) =>
  new Map(
    (
      await db.query<{ id: string; dispatched_at: Date | null }>(
        'select id, dispatched_at from outbox where realm_id = $1',
        [realmId],
      )
    ).rows.map((r) => [r.id, ms(r.dispatched_at)]),
  );

describe('worker › outbox', () => {
  test('case=dispatch marks every pending event dispatched, in batches', async (t) => {
    const h = await startHarness(t);
    const db = h.ctx.db;
    const realm = await h.createRealm();
    const now = new Date(Date.UTC(2033, 0, 1));
    const ids = [
      await addUserCreated(db, realm.id, new Date(now.getTime() - 3 * SECOND)),
      await addUserCreated(db, realm.id, new Date(now.getTime() - 2 * SECOND)),
    ];
    // More than one dispatch batch (500) is pending.
    await db.query(
      `insert into outbox (realm_id, id, event_type, event_version, occurred_at, data)
       select $1, 'obx_bulk' || lpad(g::text, 5, '0'), 'user.created', 1, $2, '{}'::jsonb
         from generate_series(1, 620) g`,
      [realm.id, new Date(now.getTime() - SECOND)],
    );

    const report = await dispatchOutbox({ db }, now);
    assert.ok((report.dispatched ?? 0) >= 622);
    const rows = await rowsOf(db, realm.id);
    assert.equal(rows.size, 622);
    for (const [id, dispatchedAt] of rows) assert.equal(dispatchedAt, now.getTime(), `${id} dispatched`);

    // Dispatched events are not handed out again.
    const later = new Date(now.getTime() + DAY);
    await dispatchOutbox({ db }, later);
    for (const id of ids) assert.equal((await rowsOf(db, realm.id)).get(id), now.getTime());
  });

  test('case=cleanup deletes dispatched events older than seven days and nothing else', async (t) => {
    const h = await startHarness(t);
    const db = h.ctx.db;
    const realm = await h.createRealm();
    const now = new Date(Date.UTC(2033, 6, 1));
    const ago = (millis: number) => new Date(now.getTime() - millis);
    const dispatchedAt = async (id: string, at: Date) =>
      db.query('update outbox set dispatched_at = $3 where realm_id = $1 and id = $2', [realm.id, id, at]);

    const expired = await addUserCreated(db, realm.id, ago(9 * DAY));
    await dispatchedAt(expired, ago(7 * DAY + SECOND));
    const exactlySeven = await addUserCreated(db, realm.id, ago(8 * DAY));
    await dispatchedAt(exactlySeven, ago(7 * DAY));
    const recent = await addUserCreated(db, realm.id, ago(2 * DAY));
    await dispatchedAt(recent, ago(DAY));
    const undelivered = await addUserCreated(db, realm.id, ago(30 * DAY));

    await cleanupOutbox({ db }, now);

    assert.deepEqual(
      [...(await rowsOf(db, realm.id)).keys()].sort(),
      [exactlySeven, recent, undelivered].sort(),
    );
  });
});
