// The new password of a sign-in (a self-service reset, the required action update_password) is
// refused when it is the current one, or one of the earlier ones password.history_count keeps
// (spec doc 1, realm policy member `password`): 422 validation_failed with password_reused on
// new_password, the transaction still pending with update_password offered.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, PASSWORD, passwordSignIn, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';

const REUSED = [{ field: 'new_password', code: 'password_reused' }];

async function setup(t: Parameters<typeof signinSetup>[0], policy: Record<string, unknown> = {}) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { overrides: mail.overrides });
  if (Object.keys(policy).length > 0) await s.h.setPolicy(s.realm, policy);
  let n = 0;
  /** A forgotten-password transaction up to the proved code. */
  const resetProved = async () => {
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    assert.equal((await tx.step('password/reset', {})).status, 200);
    await deliverQueued(s.h);
    n += 1;
    const message = await mail.waitFor('alice@example.com', n, s.realm.display_name);
    const proved = await tx.step('otp/verify', { code: codeIn(message) });
    assert.deepEqual(actionTypes(proved.body), ['update_password'], JSON.stringify(proved.body));
    return { tx, proved };
  };
  return { ...s, resetProved };
}

describe('sign-in › a new password that comes back is refused', () => {
  test('case=reset: the current password is refused, the action says it is a reset/mode=headless', async (t) => {
    const s = await setup(t);
    const { tx, proved } = await s.resetProved();
    assert.deepEqual(proved.body.next_actions[0].options, { reset: true });
    const same = await tx.step('password/update', { new_password: PASSWORD });
    assert.equal(same.status, 422, JSON.stringify(same.body));
    assert.equal(same.body.code, 'validation_failed');
    assert.deepEqual(same.body.errors, REUSED);
    const still = await tx.get();
    assert.equal(still.body.status, 'pending');
    assert.deepEqual(actionTypes(still.body), ['update_password']);
    const done = await tx.step('password/update', { new_password: 'brand-new-secret-1' });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  });

  test('case=reset: the passwords history_count keeps are refused too/mode=headless', async (t) => {
    const s = await setup(t, { password: { history_count: 3 } });
    const first = await s.resetProved();
    const done = await first.tx.step('password/update', { new_password: 'brand-new-secret-1' });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const second = await s.resetProved();
    for (const earlier of [PASSWORD, 'brand-new-secret-1']) {
      const back = await second.tx.step('password/update', { new_password: earlier });
      assert.equal(back.status, 422, `${earlier}: ${JSON.stringify(back.body)}`);
      assert.deepEqual(back.body.errors, REUSED);
    }
    const fresh = await second.tx.step('password/update', { new_password: 'brand-new-secret-2' });
    assert.equal(fresh.body.status, 'completed', JSON.stringify(fresh.body));
  });

  test('case=required action update_password: the current password is refused, no reset said/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.ctx.db.query(
      `update users set required_actions = '{update_password}' where realm_id = $1 and id = $2`,
      [s.realm.id, s.user.id],
    );
    const { tx, state } = await passwordSignIn(s.h, s.realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(state.body.next_actions, [
      { type: 'update_password', required: true, fields: ['new_password'] },
    ]);
    const same = await tx.step('password/update', { new_password: PASSWORD });
    assert.equal(same.status, 422, JSON.stringify(same.body));
    assert.deepEqual(same.body.errors, REUSED);
    const done = await tx.step('password/update', { new_password: 'brand-new-secret-1' });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  });
});
