import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  count,
  events,
  PASSWORD,
  REDIRECT,
  rows,
  signinSetup,
} from '../../harness/signin-kit.ts';

async function setup(t: Parameters<typeof signinSetup>[0]) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { overrides: mail.overrides });
  return { ...s, mail };
}

describe('sign-in › self-service password reset', () => {
  test('case=a mailed code, then update_password; sessions and grants end; user.password_reset', async (t) => {
    const s = await setup(t);
    const earlier = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    assert.equal(
      (await earlier.step('password', { identifier: 'alice@example.com', password: PASSWORD })).body.status,
      'completed',
    );
    const live = () =>
      count(s.h, 'select 1 from sessions where realm_id = $1 and user_id = $2 and revoked_at is null', [
        s.realm.id,
        s.user.id,
      ]);
    assert.equal(await live(), 1);

    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.deepEqual(identified.body.next_actions[0].options, { reset: true, reset_code_sent: false });
    const sent = await tx.step('password/reset', {});
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal(sent.body.next_actions[0].options.reset_code_sent, true);
    await deliverQueued(s.h);
    const mail = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    assert.match(mail.subject, /Reset your password/);
    const proved = await tx.step('otp/verify', { code: codeIn(mail) });
    assert.deepEqual(actionTypes(proved.body), ['update_password'], JSON.stringify(proved.body));
    const done = await tx.step('password/update', { new_password: 'brand-new-secret-1' });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal(await live(), 1, 'only the new session');
    const [reset] = await events(s.h, s.realm, 'user.password_reset');
    assert.equal(reset?.data.user_id, s.user.id);
    const revoked = await rows(
      s.h,
      `select 1 from outbox where realm_id = $1 and event_type = 'session.revoked'`,
      [s.realm.id],
    );
    assert.equal(revoked.length, 1);

    const again = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const old = await again.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(old.body.status, 'pending', 'the old password is gone');
    const fresh = await again.step('password', { password: 'brand-new-secret-1' });
    assert.equal(fresh.body.status, 'completed');
  });

  test('case=an unknown address: same answer, no mail; any code fails', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'nobody@example.com' });
    const sent = await tx.step('password/reset', {});
    assert.equal(sent.status, 200);
    assert.equal(sent.body.next_actions[0].options.reset_code_sent, true);
    assert.deepEqual(await deliverQueued(s.h), {});
    const tried = await tx.step('otp/verify', { code: '123456' });
    assert.equal(tried.body.status, 'pending');
    assert.deepEqual(actionTypes(tried.body), ['password']);
  });

  test('case=no reset for a username or without a mail transport', async (t) => {
    const s = await signinSetup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.equal(identified.body.next_actions[0].options, undefined);
    assert.equal((await tx.step('password/reset', {})).status, 409);
  });
});
