// notifications.new_sign_in and notifications.factor_changed (docs/policy.md): mail to the account
// through the delivery queue on a sign-in from a device it has not used and on a factor added or
// removed, in the account's language; nothing while the realm leaves them off.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { hotp } from '../../../src/mfa/otp.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { count, PASSWORD, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';

const ALICE = 'alice@example.com';

async function setup(t: TestContext, policy: Record<string, unknown>) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { overrides: mail.overrides });
  const admin = await apiCaller(s.h, s.realm);
  const put = await admin.call('PUT', '/settings', { policy });
  assert.equal(put.status, 200, await put.text());
  /** Mail queued in the realm (the administrator's sign-ins came before the notices were on). */
  const queued = () => count(s.h, 'select 1 from notifications where realm_id = $1', [s.realm.id]);
  /** A password sign-in of alice from a client naming itself `ua`. */
  const signIn = async (ua: string, locales?: string) => {
    const extra = locales ? { ui_locales: locales } : {};
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, extra, { 'user-agent': ua });
    await tx.step('identify', { identifier: ALICE });
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  };
  return { ...s, mail, queued, signIn };
}

describe('notifications › realm notices', () => {
  test('case=factor_changed mails each factor added and removed, in sign-in and self-service', async (t) => {
    const s = await setup(t, {
      notifications: { factor_changed: true },
      mfa: { requirement: 'required', allowed_factors: ['totp', 'hotp', 'recovery_code'] },
    });
    // Required MFA: alice's first sign-in enrolls an authenticator app (mail 1).
    const me = await apiCaller(s.h, s.realm, { audience: 'account', userId: s.user.id });
    await deliverQueued(s.h);
    const first = await s.mail.waitFor(ALICE, 1, s.realm.display_name);
    assert.match(first.subject, /sign-in factor .* changed/);
    assert.match(first.text, /An authenticator app was added to your account\./);

    const enrolled = await me.call('POST', '/me/hotp/enroll', {});
    assert.equal(enrolled.status, 201);
    const secret = ((await enrolled.json()) as { secret: string }).secret;
    const code = hotp(decodeBase32(secret), 0);
    const activated = await me.call(
      'POST',
      '/me/hotp/activate',
      { code },
      { 'accept-language': 'de-DE,de;q=0.9' },
    );
    assert.equal(activated.status, 200, await activated.text());
    assert.equal((await me.call('DELETE', '/me/hotp')).status, 204);
    await deliverQueued(s.h);
    const added = await s.mail.waitFor(ALICE, 2, s.realm.display_name);
    assert.match(added.text, /Ein HOTP-Token wurde Ihrem Konto hinzugefügt\./);
    const removed = await s.mail.waitFor(ALICE, 3, s.realm.display_name);
    assert.match(removed.text, /An HOTP token was removed from your account\./);
  });

  test('case=new_sign_in mails a sign-in from a user agent the account has not used/mode=headless', async (t) => {
    const s = await setup(t, { notifications: { new_sign_in: true } });
    await s.signIn('Agent-A/1.0');
    assert.equal(await s.queued(), 0, "the account's first session is no new device");
    await s.signIn('Agent-A/1.0');
    assert.equal(await s.queued(), 0, 'a user agent of an earlier session is a known device');
    await s.signIn('Agent-B/2.0', 'de');
    assert.equal(await s.queued(), 1);
    await deliverQueued(s.h);
    const mail = await s.mail.waitFor(ALICE, 1, s.realm.display_name);
    assert.match(mail.subject, /^Neue Anmeldung/);
    assert.match(mail.text, /Gerät: Agent-B\/2\.0/);
    await s.signIn('Agent-B/2.0');
    assert.equal(await s.queued(), 1, 'once per device');
  });

  test('case=off by default: neither notice is mailed/mode=headless', async (t) => {
    const s = await setup(t, { mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] } });
    await s.signIn('Agent-A/1.0');
    await s.signIn('Agent-B/2.0');
    const me = await apiCaller(s.h, s.realm, { audience: 'account', userId: s.user.id });
    const enrolled = await me.call('POST', '/me/hotp/enroll', {});
    const secret = ((await enrolled.json()) as { secret: string }).secret;
    const activated = await me.call('POST', '/me/hotp/activate', { code: hotp(decodeBase32(secret), 0) });
    assert.equal(activated.status, 200);
    assert.equal(await s.queued(), 0);
  });
});
