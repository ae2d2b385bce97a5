// Remembered devices (spec doc 1, login.remember_devices, Authentication 3; docs/security.md,
// "Remembered devices"): offered after a second factor, handed out once (pa_rd cookie in a
// browser, one_time.remembered_device_token headless), skipping TOTP at later sign-ins unless the
// request demands step-up, and forgotten through /me.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { json, startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  codeOf,
  enrollTotp,
  movableClock,
  nextTotpStep,
  PASSWORD,
  parseSetCookies,
  REDIRECT,
  rows,
  signinSetup,
  startBrowser,
  totpCode,
} from '../../harness/signin-kit.ts';
import { clientSecret, grantResources, oauthPost } from '../../harness/token-kit.ts';

async function setup(t: TestContext) {
  const clock = movableClock();
  const s = await signinSetup(t, { clock, loginUi: 'https://login.example.com/signin' });
  const { secret, recoveryCodes } = await enrollTotp(s.h, s.realm, 'web-app', 'alice@example.com', clock);
  await s.h.setPolicy(s.realm, { login: { remember_devices: true, remember_device_days: 20 } });
  return { ...s, clock, secret, recoveryCodes };
}

describe('sign-in › remembered devices', () => {
  test('case=remembered after TOTP, then TOTP is skipped, except for step-up/mode=headless', async (t) => {
    const { h, realm, client, clock, secret, recoveryCodes } = await setup(t);
    const signIn = async (device: string | null, extra: Record<string, unknown> = {}) => {
      const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT, extra);
      const headers: Record<string, string> = device ? { 'x-remembered-device': device } : {};
      await tx.step('identify', { identifier: 'alice@example.com' }, headers);
      return { tx, headers, state: await tx.step('password', { password: PASSWORD }, headers) };
    };
    nextTotpStep(clock);
    const first = await signIn(null);
    assert.deepEqual(actionTypes(first.state.body), ['totp', 'recovery_code']);
    const afterTotp = await first.tx.step('totp', { code: totpCode(secret, clock.now()) });
    assert.deepEqual(actionTypes(afterTotp.body), ['remember_device']);
    const remembered = await first.tx.step('remember-device', { remember: true });
    assert.equal(remembered.body.status, 'completed', JSON.stringify(remembered.body));
    const token: string = remembered.body.one_time.remembered_device_token;
    assert.ok(token.length >= 40);
    const [device] = await rows(h, 'select * from remembered_devices where realm_id = $1', [realm.id]);
    assert.notEqual(device?.token_digest, token, 'stored as a digest');
    assert.equal(new Date(device?.expires_at).getTime() - clock.now().getTime(), 20 * 86_400_000);

    const skipped = await signIn(token);
    assert.equal(skipped.state.body.status, 'completed', 'the remembered device skips TOTP');
    assert.deepEqual(skipped.state.body.completed_factors, ['pwd']);
    assert.equal((await signIn('not-a-device-token')).state.body.status, 'pending');
    const stepUp = await signIn(token, { acr_values: 'mfa' });
    assert.deepEqual(
      actionTypes(stepUp.state.body),
      ['totp', 'recovery_code'],
      'acr_values mfa is never skipped',
    );

    // A recovery code is no reason to remember a device: the question is not asked.
    const viaRecovery = await signIn(null);
    const recovered = await viaRecovery.tx.step('recovery-code', { code: recoveryCodes[0] });
    assert.equal(recovered.body.status, 'completed', JSON.stringify(recovered.body));
    await h.ctx.db.query("update users set state = 'active' where realm_id = $1", [realm.id]);

    // No to the question: nothing stored, asked again next time.
    nextTotpStep(clock);
    const declined = await signIn(null);
    await declined.tx.step('totp', { code: totpCode(secret, clock.now()) });
    assert.equal((await declined.tx.step('remember-device', { remember: false })).body.status, 'completed');
    assert.equal(
      (await rows(h, 'select 1 from remembered_devices where realm_id = $1', [realm.id])).length,
      1,
    );

    // Forgotten through /me: the token no longer skips anything.
    await grantResources(h, realm, client, ['builtin:account']);
    const audience = `${h.ctx.config.server.publicOrigin}/api/v1/realms/${realm.name}/me`;
    const viaDevice = await signIn(token, { resource: [audience] });
    assert.equal(viaDevice.state.body.status, 'completed');
    const tokens = await oauthPost(
      h,
      realm,
      'token',
      {
        grant_type: 'authorization_code',
        code: codeOf(viaDevice.state.body.redirect_to),
        redirect_uri: REDIRECT,
        code_verifier: viaDevice.tx.verifier,
        resource: audience,
      },
      { clientId: 'web-app', secret: await clientSecret(h, realm, client) },
    );
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const forgot = await json(
      await h.get(`/api/v1/realms/${realm.name}/me/remembered-devices/${device?.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${tokens.body.access_token}` },
      }),
    );
    assert.equal(forgot.status, 204);
    assert.equal((await signIn(token)).state.body.status, 'pending');
  });

  test('case=a browser gets the token only as the pa_rd cookie/mode=browser', async (t) => {
    const { h, realm, clock, secret } = await setup(t);
    nextTotpStep(clock);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    await tx.step('password', { password: PASSWORD });
    await tx.step('totp', { code: totpCode(secret, clock.now()) });
    const done = await tx.step('remember-device', { remember: true });
    assert.equal(done.body.status, 'completed');
    assert.equal(done.body.one_time, undefined, 'no token in the body');
    const cookie = parseSetCookies(done.headers).find((c) => c.name === 'pa_rd');
    assert.ok(cookie, 'pa_rd set');
    assert.equal(cookie.attributes.httponly, true);
    assert.equal(cookie.attributes.path, `/api/v1/realms/${realm.name}/auth/`);
    assert.equal(cookie.attributes.samesite, 'Lax');
    assert.equal(Number(cookie.attributes['max-age']), 30 * 86_400 - 10 * 86_400);

    const next = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    const withDevice = { cookie: `pa_tx=${next.cookie}; pa_rd=${cookie.value}` };
    await next.step('identify', { identifier: 'alice@example.com' }, withDevice);
    const skipped = await next.step('password', { password: PASSWORD }, withDevice);
    assert.equal(skipped.body.status, 'completed', JSON.stringify(skipped.body));
  });
});
