// A chosen password must reach the realm's minimum strength, password.min_strength (default 2,
// 0 turns it off; docs/policy.md): registration and the reset's new password refuse a common or
// guessable one with 422 validation_failed and `too_weak` on the field, like the other password
// rules, and the transaction stays where it was.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';

type Ctx = Parameters<typeof signinSetup>[0];
const NEW = { email: 'new@example.com', display_name: 'New Person' };

async function setup(t: Ctx, policy: Record<string, unknown> = {}) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { overrides: mail.overrides });
  await s.h.setPolicy(s.realm, {
    registration: { mode: 'open', require_email_verification: true },
    ...policy,
  });
  return { ...s, mail };
}

describe('sign-in › password strength', () => {
  test('case=registration refuses password123 with too_weak, then takes a strong one/mode=headless', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    for (const weak of ['password123', 'qwertyuiop', 'new@example.com1']) {
      const refused = await tx.step('registration', { ...NEW, password: weak });
      assert.equal(refused.status, 422, `${weak}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.code, 'validation_failed');
      assert.deepEqual(refused.body.errors, [{ field: 'password', code: 'too_weak' }], weak);
    }
    const ok = await tx.step('registration', { ...NEW, password: 'violet anchor tramples 42' });
    assert.deepEqual(actionTypes(ok.body), ['verify_email'], JSON.stringify(ok.body));
  });

  test('case=min_strength 0 turns the check off; the policy refuses 5/mode=headless', async (t) => {
    const s = await setup(t, { password: { min_strength: 0 } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const ok = await tx.step('registration', { ...NEW, password: 'password123' });
    assert.deepEqual(actionTypes(ok.body), ['verify_email'], JSON.stringify(ok.body));
    await assert.rejects(s.h.setPolicy(s.realm, { password: { min_strength: 5 } }));
  });

  test('case=a reset refuses a weak new password with too_weak on new_password/mode=headless', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    assert.equal((await tx.step('password/reset', {})).status, 200);
    await deliverQueued(s.h);
    const message = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    const proved = await tx.step('otp/verify', { code: codeIn(message) });
    assert.deepEqual(actionTypes(proved.body), ['update_password'], JSON.stringify(proved.body));
    const weak = await tx.step('password/update', { new_password: 'password123' });
    assert.equal(weak.status, 422, JSON.stringify(weak.body));
    assert.deepEqual(weak.body.errors, [{ field: 'new_password', code: 'too_weak' }]);
    assert.deepEqual(actionTypes((await tx.get()).body), ['update_password']);
    const done = await tx.step('password/update', { new_password: 'violet anchor tramples 42' });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  });
});
