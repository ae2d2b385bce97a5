// login.identifiers (docs/policy.md): the identifier types a user signs in and registers with. A
// type the realm leaves out is refused at identify and password for known and unknown accounts
// alike, and a username is not taken at registration unless the realm lists it.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, PASSWORD, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';

async function setup(t: TestContext, policy: Record<string, unknown>) {
  const s = await signinSetup(t, { user: { email: 'alice@example.com', username: 'alice' } });
  const admin = await apiCaller(s.h, s.realm);
  const put = await admin.call('PUT', '/settings', { policy });
  assert.equal(put.status, 200, await put.text());
  const start = (intent?: 'register') =>
    startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, intent ? { intent } : {});
  return { ...s, start };
}

const refusedField = (res: { status: number; body: { code?: string; errors?: unknown } }, field: string) =>
  assert.deepEqual(
    [
      res.status,
      res.body.code,
      (res.body.errors as { field: string; code: string }[])?.map((e) => [e.field, e.code]),
    ],
    [422, 'validation_failed', [[field, 'not_allowed']]],
    JSON.stringify(res.body),
  );

describe('sign-in › login.identifiers', () => {
  test('case=usernames only: an email is refused whether or not an account has it/mode=headless', async (t) => {
    const s = await setup(t, { login: { identifiers: ['username'] } });
    const tx = await s.start();
    refusedField(await tx.step('identify', { identifier: 'alice@example.com' }), 'identifier');
    refusedField(await tx.step('identify', { identifier: 'nobody@example.com' }), 'identifier');
    refusedField(
      await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD }),
      'identifier',
    );
    const identified = await tx.step('identify', { identifier: 'alice' });
    assert.equal(identified.status, 200, JSON.stringify(identified.body));
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  });

  test('case=emails only: a username is refused, the email signs in/mode=headless', async (t) => {
    const s = await setup(t, { login: { identifiers: ['email'] } });
    const tx = await s.start();
    refusedField(await tx.step('password', { identifier: 'alice', password: PASSWORD }), 'identifier');
    const done = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  });

  test('case=registration takes a username only where the realm lists usernames/mode=headless', async (t) => {
    const s = await setup(t, {
      login: { identifiers: ['email'] },
      registration: { mode: 'open', require_email_verification: false },
    });
    const tx = await s.start('register');
    assert.deepEqual(actionTypes(tx.start.body.state), ['register']);
    assert.deepEqual(tx.start.body.state.next_actions[0].fields, [
      'email',
      'password',
      'display_name',
      'attributes',
    ]);
    const NEW = { email: 'new@example.com', password: 'a-long-password-here' };
    refusedField(await tx.step('registration', { ...NEW, username: 'newbie' }), 'username');
    const registered = await tx.step('registration', NEW);
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
  });
});
