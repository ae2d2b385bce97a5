import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanupSignin } from '../../../src/signin/signin-cleanup.task.ts';
import { startHarness } from '../../harness/harness.ts';
import { startHeadless } from '../../harness/signin-driver.ts';

describe('worker › signin.cleanup', () => {
  test('deletes ended transactions after a day and keeps recent or pending ones', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const redirect = 'https://app.example.com/cb';
    await h.createClient(realm, { clientId: 'app', name: 'App', type: 'web', redirectUris: [redirect] });
    const ended = await startHeadless(h, realm.name, 'app', redirect);
    assert.equal((await ended.step('cancel')).body.status, 'cancelled');
    const pending = await startHeadless(h, realm.name, 'app', redirect);
    const count = async (id: string) =>
      Number(
        (
          await h.ctx.db.query<{ n: string }>('select count(*) as n from signin_transactions where id = $1', [
            id,
          ])
        ).rows[0]?.n,
      );
    const retention = h.ctx.config.privacy.sessionRetentionMs;

    await cleanupSignin({ db: h.ctx.db, sessionRetentionMs: retention }, new Date());
    assert.equal(await count(ended.id), 1, 'a cancelled transaction stays for a day');

    const later = new Date(Date.now() + 25 * 3600 * 1000);
    await cleanupSignin({ db: h.ctx.db, sessionRetentionMs: retention }, later);
    assert.equal(await count(ended.id), 0);
    assert.equal(await count(pending.id), 0, 'a pending transaction past its expiry is gone too');
  });

  test('deletes pushed authorization requests once their 60 seconds are over', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const insert = (digest: string, expiresAt: Date) =>
      h.ctx.db.query(
        `insert into pushed_authorization_requests (realm_id, request_digest, client_id, params, expires_at, created_at)
         values ($1, $2, 'app', '{}', $3, $4)`,
        [realm.id, digest, expiresAt, new Date(expiresAt.getTime() - 60_000)],
      );
    const now = new Date();
    await insert('expired', new Date(now.getTime() - 1000));
    await insert('live', new Date(now.getTime() + 30_000));
    const report = await cleanupSignin({ db: h.ctx.db, sessionRetentionMs: 0 }, now);
    assert.equal(report.pushed_requests, 1);
    const left = await h.ctx.db.query<{ request_digest: string }>(
      'select request_digest from pushed_authorization_requests where realm_id = $1',
      [realm.id],
    );
    assert.deepEqual(
      left.rows.map((r) => r.request_digest),
      ['live'],
    );
  });
});
