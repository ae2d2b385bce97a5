// Sealing audit evidence into hash-chained batches and detecting tampering (docs/audit.md,
// Sealing): the real worker tasks audit.seal and audit.verify_recent, and the gauges they feed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { auditWorker } from '../../harness/audit-kit.ts';
import { rows } from '../../harness/signin-kit.ts';

describe('audit › sealing and the hash chain', () => {
  test('case=events are sealed into linked batches; edits, deletions and a broken link are found', async (t) => {
    const { h, seal, verify, metric } = await auditWorker(t);
    const realm = await h.createRealm();
    await h.createUser(realm, { email: 'one@example.com' });
    assert.ok(((await metric('service_audit_unsealed_events')) ?? 0) > 0, 'unsealed before the task runs');
    const status = (await (await h.internal('/status')).json()) as { capabilities: Record<string, string> };
    assert.equal(status.capabilities.audit_sealing, 'ok');

    const first = await seal();
    assert.ok((first?.batches ?? 0) >= 1 && (first?.events ?? 0) >= 1);
    assert.equal(await metric('service_audit_unsealed_events'), 0);
    assert.equal(await metric('service_audit_unsealed_oldest_seconds'), 0);
    await h.createUser(realm, { email: 'two@example.com' });
    await seal();

    const unsealed = await rows(
      h,
      'select id from audit_events where batch_id is null or content_hash is null',
    );
    assert.deepEqual(unsealed, []);
    const batches = await rows(h, 'select * from audit_batches order by seq');
    assert.ok(batches.length >= 2);
    for (let i = 1; i < batches.length; i++) {
      assert.equal(batches[i]?.previous_hash, batches[i - 1]?.batch_hash, 'each batch links the one before');
      assert.equal(Number(batches[i]?.seq), Number(batches[i - 1]?.seq) + 1);
    }
    assert.deepEqual(await verify(), { checked: batches.length, problems: 0 });
    assert.equal(await metric('service_audit_integrity_problems'), 0);

    // An edited event.
    const [victim] = await rows(
      h,
      `select id, reason from audit_events where realm_id = $1 and type = 'user.created' order by id limit 1`,
      [realm.id],
    );
    assert.ok(victim);
    await h.ctx.db.query(`update audit_events set reason = 'rewritten' where id = $1`, [victim.id]);
    assert.equal((await verify())?.problems, 1);
    assert.equal(await metric('service_audit_integrity_problems'), 1);
    await h.ctx.db.query('update audit_events set reason = $2 where id = $1', [victim.id, victim.reason]);
    assert.equal((await verify())?.problems, 0, 'restored, it verifies again');

    // A deleted event.
    await h.ctx.db.query('create table saved_event as select * from audit_events where id = $1', [victim.id]);
    await h.ctx.db.query('delete from audit_events where id = $1', [victim.id]);
    assert.equal((await verify())?.problems, 1);
    await h.ctx.db.query('insert into audit_events select * from saved_event');
    assert.equal((await verify())?.problems, 0);

    // A batch whose hash was replaced: it no longer matches its fields, and the next one's link breaks.
    const middle = batches[batches.length - 2];
    assert.ok(middle);
    await h.ctx.db.query(`update audit_batches set batch_hash = repeat('0', 64) where id = $1`, [middle.id]);
    assert.equal((await verify())?.problems, 2);
    assert.equal(await metric('service_audit_integrity_problems'), 2);
  });
});
