import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eraseDueAccounts } from '../../../src/users/self-deletion.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { json, startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  audits,
  count,
  events,
  PASSWORD,
  REDIRECT,
  signinSetup,
  userRow,
} from '../../harness/signin-kit.ts';

const DAY = 86_400_000;

describe('users › self-service deletion', () => {
  test('case=POST /me/deletion: pending_deletion, sessions end; after the grace period the worker erases it', async (t) => {
    const s = await signinSetup(t);
    const me = await apiCaller(s.h, s.realm, { audience: 'account', userId: s.user.id, password: PASSWORD });
    const res = await json(await me.call('POST', '/me/deletion', {}));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.state, 'pending_deletion');
    assert.equal(new Date(res.body.deletion_due_at).getTime() - s.h.clock.now().getTime() > 29 * DAY, true);
    assert.equal((await userRow(s.h, s.realm, s.user.id)).state, 'pending_deletion');
    assert.equal(
      await count(s.h, 'select 1 from sessions where realm_id = $1 and user_id = $2 and revoked_at is null', [
        s.realm.id,
        s.user.id,
      ]),
      0,
    );
    assert.equal((await me.call('GET', '/me/sessions')).status, 401, 'its tokens stopped working');
    assert.equal((await audits(s.h, s.realm, 'user.deletion_requested')).length, 1);
    assert.equal((await events(s.h, s.realm, 'user.deleted')).length, 0, 'no event for the request');

    assert.deepEqual(await eraseDueAccounts({ db: s.h.ctx.db }, s.h.clock.now()), { erased: 0 });
    assert.deepEqual(
      await eraseDueAccounts({ db: s.h.ctx.db }, new Date(s.h.clock.now().getTime() + 31 * DAY)),
      {
        erased: 1,
      },
    );
    assert.equal((await userRow(s.h, s.realm, s.user.id)).state, 'deleted');
    const [deleted] = await events(s.h, s.realm, 'user.deleted');
    assert.equal(deleted?.data.user_id, s.user.id);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const gone = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(gone.body.status, 'pending');
  });

  test('case=a sign-in before the grace period ends offers cancel_deletion and keeps the account', async (t) => {
    const s = await signinSetup(t);
    const me = await apiCaller(s.h, s.realm, { audience: 'account', userId: s.user.id, password: PASSWORD });
    assert.equal((await me.call('POST', '/me/deletion', {})).status, 202);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.deepEqual(actionTypes(after.body), ['cancel_deletion']);
    assert.equal((await tx.step('cancel-deletion', {})).body.status, 'completed');
    assert.deepEqual(
      await eraseDueAccounts({ db: s.h.ctx.db }, new Date(s.h.clock.now().getTime() + 31 * DAY)),
      {
        erased: 0,
      },
    );
    assert.equal((await userRow(s.h, s.realm, s.user.id)).state, 'active');
  });
});

describe('users › lifecycle expiry', () => {
  test('case=unverified registrations after 72 h and idle guests after guest_ttl_days are erased', async (t) => {
    const { runLifecycleRules } = await import('../../../src/users/lifecycle.task.ts');
    const s = await signinSetup(t);
    await s.h.setPolicy(s.realm, { lifecycle: { unverified_account_ttl_hours: 72, guest_ttl_days: 5 } });
    const pending = await s.h.createUser(s.realm, { email: 'late@example.com' });
    await s.h.ctx.db.query(
      `update users set state = 'pending_verification' where realm_id = $1 and id = $2`,
      [s.realm.id, pending.id],
    );
    const guest = await s.h.createUser(s.realm, {});
    await s.h.ctx.db.query('update users set is_guest = true where realm_id = $1 and id = $2', [
      s.realm.id,
      guest.id,
    ]);
    const at = (ms: number) => new Date(s.h.clock.now().getTime() + ms);
    await runLifecycleRules({ db: s.h.ctx.db }, at(71 * 3_600_000));
    assert.equal((await userRow(s.h, s.realm, pending.id)).state, 'pending_verification');
    await runLifecycleRules({ db: s.h.ctx.db }, at(73 * 3_600_000));
    assert.equal((await userRow(s.h, s.realm, pending.id)).state, 'deleted');
    assert.equal((await userRow(s.h, s.realm, guest.id)).state, 'active', 'the guest has 5 days');
    await runLifecycleRules({ db: s.h.ctx.db }, at(6 * DAY));
    assert.equal((await userRow(s.h, s.realm, guest.id)).state, 'deleted');
    assert.equal((await userRow(s.h, s.realm, s.user.id)).state, 'active');
    const reasons = (await audits(s.h, s.realm, 'user.deleted')).map((a) => a.reason).sort();
    assert.deepEqual(reasons, ['guest_expired', 'unverified_registration_expired']);
  });
});
