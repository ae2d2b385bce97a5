// The account-wide revocation record keeps whole seconds, and a token issued in the revoking second
// is revoked with it (docs/decisions.md). Every flow that ends everything an account holds and then
// gives the same account new tokens must still hand out live ones when it all happens within one
// second: the clock here stands still, so without the wait at completion each new token would be
// issued in the revoked second and answer 401.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { apiCaller, meCaller } from '../../harness/api-kit.ts';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { type HeadlessTx, type JsonResponse, startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, movableClock, PASSWORD, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';
import { clientSecret, exchangeCode, grantResources } from '../../harness/token-kit.ts';

async function setup(t: TestContext) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { clock: movableClock(), overrides: mail.overrides });
  await grantResources(s.h, s.realm, s.client, ['builtin:account']);
  const creds = { clientId: 'web-app', secret: await clientSecret(s.h, s.realm, s.client) };
  const audience = `${s.h.ctx.config.server.publicOrigin}/api/v1/realms/${s.realm.name}/me`;
  const start = () => startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { resource: [audience] });
  const me = meCaller(s.h, s.realm);
  /** The completed transaction's code for an account token. */
  const redeem = async (tx: HeadlessTx, done: JsonResponse): Promise<string> => {
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const r = await exchangeCode(s.h, s.realm, creds, done.body.redirect_to, tx.verifier, {
      resource: audience,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.access_token;
  };
  /** A password sign-in answered to the end with `then` for what it asks next. */
  const signIn = async (
    password = PASSWORD,
    then?: (tx: HeadlessTx, state: JsonResponse) => Promise<JsonResponse>,
  ) => {
    const tx = await start();
    await tx.step('identify', { identifier: 'alice@example.com' });
    const state = await tx.step('password', { password });
    return redeem(tx, then && state.body.status === 'pending' ? await then(tx, state) : state);
  };
  return { ...s, mail, start, me, redeem, signIn };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The new token works, and it was handed out in a later second than the revocation. */
async function assertLiveAfter(s: Setup, revokedAt: Date, token: string) {
  const r = await s.me(token, 'GET', '/sessions');
  assert.equal(r.status, 200, `the new token is live: ${JSON.stringify(r.body)}`);
  assert.ok(
    Math.floor(s.h.clock.now().getTime() / 1000) > Math.floor(revokedAt.getTime() / 1000),
    'the code was handed out in the next second',
  );
}

describe('sign-in › new tokens right after an account-wide revocation', () => {
  test('case=password reset, completed in the same second/mode=headless', async (t) => {
    const s = await setup(t);
    const earlier = await s.signIn();
    const tx = await s.start();
    await tx.step('identify', { identifier: 'alice@example.com' });
    assert.equal((await tx.step('password/reset', {})).status, 200);
    await deliverQueued(s.h);
    const code = codeIn(await s.mail.waitFor('alice@example.com', 1, s.realm.display_name));
    assert.deepEqual(actionTypes((await tx.step('otp/verify', { code })).body), ['update_password']);
    const revokedAt = s.h.clock.now();
    const done = await tx.step('password/update', { new_password: 'a-brand-new-secret-1' });
    await assertLiveAfter(s, revokedAt, await s.redeem(tx, done));
    assert.equal((await s.me(earlier, 'GET', '/sessions')).status, 401, 'the old token ended');
  });

  test('case=a compromised password, then update_password at sign-in/mode=headless', async (t) => {
    const s = await setup(t);
    const admin = await apiCaller(s.h, s.realm);
    const marked = await admin.call('POST', `/users/${s.user.id}/credentials/password/compromised`, {});
    assert.equal(marked.status, 204);
    const revokedAt = s.h.clock.now();
    const token = await s.signIn(PASSWORD, async (tx, state) => {
      assert.deepEqual(actionTypes(state.body), ['update_password']);
      return tx.step('password/update', { new_password: 'a-brand-new-secret-2' });
    });
    await assertLiveAfter(s, revokedAt, token);
  });

  test('case=log out everywhere, then sign in again/mode=headless', async (t) => {
    const s = await setup(t);
    const first = await s.signIn();
    assert.equal((await s.me(first, 'POST', '/sessions/revoke-all', {})).status, 200);
    const revokedAt = s.h.clock.now();
    await assertLiveAfter(s, revokedAt, await s.signIn());
  });

  test('case=self-deletion, then cancel_deletion at the next sign-in/mode=headless', async (t) => {
    const s = await setup(t);
    const first = await s.signIn();
    assert.equal((await s.me(first, 'POST', '/deletion', {})).status, 202);
    const revokedAt = s.h.clock.now();
    const token = await s.signIn(PASSWORD, async (tx, state) => {
      assert.deepEqual(actionTypes(state.body), ['cancel_deletion']);
      return tx.step('cancel-deletion', {});
    });
    await assertLiveAfter(s, revokedAt, token);
  });

  test('case=an administrator ends the sessions, then the user signs in/mode=headless', async (t) => {
    const s = await setup(t);
    const admin = await apiCaller(s.h, s.realm);
    assert.equal((await admin.call('POST', `/users/${s.user.id}/revoke-sessions`, {})).status, 200);
    const revokedAt = s.h.clock.now();
    await assertLiveAfter(s, revokedAt, await s.signIn());
  });
});
