// Gaps in the sealed audit chain (docs/audit.md, Sealing): a batch deleted in SQL from the middle,
// from the start or from the end of the chain is found by audit.verify_recent and counted in
// service_audit_integrity_problems, as is a chain the archive is ahead of.
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { auditWorker, sealedRecord } from '../../harness/audit-kit.ts';
import type { HarnessOptions } from '../../harness/harness.ts';
import { rows } from '../../harness/signin-kit.ts';

async function setup(t: TestContext, opts: HarnessOptions = {}) {
  const a = await auditWorker(t, opts);
  const realm = await a.h.createRealm();
  await a.seal();
  for (let n = 1; n <= 3; n++) await sealedRecord(a, realm.id, n);
  const batches = await rows(a.h, 'select id, seq from audit_batches order by seq');
  assert.ok(batches.length >= 4);
  assert.deepEqual(await a.verify(), { checked: batches.length, problems: 0 });
  const sql = (text: string, params: unknown[] = []) => a.h.ctx.db.query(text, params);
  /** Deletes a batch in SQL (with its events unless told not to), runs `check`, then puts it back. */
  const withoutBatch = async (seq: number, opts: { keepEvents?: boolean }, check: () => Promise<void>) => {
    const saved = `saved_${seq}_${opts.keepEvents ? 'k' : 'e'}`;
    await sql(`create table ${saved}_b as select * from audit_batches where seq = $1`, [seq]);
    await sql(
      `create table ${saved}_e as select * from audit_events where batch_id in (select id from ${saved}_b)`,
    );
    if (!opts.keepEvents) await sql(`delete from audit_events where batch_id in (select id from ${saved}_b)`);
    await sql('delete from audit_batches where seq = $1', [seq]);
    await check();
    await sql(`insert into audit_batches select * from ${saved}_b`);
    if (!opts.keepEvents) await sql(`insert into audit_events select * from ${saved}_e`);
  };
  return { ...a, realm, batches, sql, withoutBatch };
}

describe('audit › gaps in the chain', () => {
  test('case=a batch deleted from the middle, the start or the end of the chain is a problem', async (t) => {
    const { verify, metric, batches, withoutBatch } = await setup(t);
    const last = Number(batches.at(-1)?.seq);
    await withoutBatch(2, {}, async () => {
      assert.equal((await verify())?.problems, 1, 'the batch after the gap');
      assert.equal(await metric('service_audit_integrity_problems'), 1);
    });
    assert.equal((await verify())?.problems, 0, 'restored');
    await withoutBatch(1, {}, async () => {
      assert.equal((await verify())?.problems, 1, 'the chain no longer starts at 1');
      assert.equal(await metric('service_audit_integrity_problems'), 1);
    });
    await withoutBatch(last, { keepEvents: true }, async () => {
      assert.equal((await verify())?.problems, 1, 'its events still name the deleted batch');
    });
    assert.deepEqual(await verify(), { checked: batches.length, problems: 0 });
  });

  test('case=with an archive, deleting the newest batch and its events, then sealing on, is a problem', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'proudauth-archive-'));
    const a = await setup(t, { overrides: { 'privacy.audit_archive_dir': dir } });
    await a.archive();
    const last = Number(a.batches.at(-1)?.seq);
    await a.sql('delete from audit_events where batch_id = (select id from audit_batches where seq = $1)', [
      last,
    ]);
    await a.sql('delete from audit_batches where seq = $1', [last]);
    assert.equal((await a.verify())?.problems, 1, 'the archive holds a batch the database lacks');
    // Sealing carries on from the batch before: the chain in the database looks whole again.
    await sealedRecord(a, a.realm.id, 9);
    const [head] = await rows(a.h, 'select seq from audit_batches order by seq desc limit 1');
    assert.equal(Number(head?.seq), last);
    assert.equal((await a.verify())?.problems, 1, 'the archive has another batch under that seq');
    assert.equal(await a.metric('service_audit_integrity_problems'), 1);
  });
});
