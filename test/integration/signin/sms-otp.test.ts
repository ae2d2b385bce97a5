import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { smsSignature } from '../../../src/notifications/index.ts';
import { deliverQueued } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, REDIRECT, rows, signinSetup } from '../../harness/signin-kit.ts';
import { SMS_TEST_KEY, smsCode, startSmsReceiver } from '../../harness/sms-kit.ts';

const PHONE = '+4915112345678';
const LOGIN = { password: true, sms_otp: true, identifiers: ['email', 'username', 'phone'] };

async function setup(t: Parameters<typeof signinSetup>[0], allowLoopback = true) {
  const sms = await startSmsReceiver(t, allowLoopback);
  const s = await signinSetup(t, { overrides: sms.overrides, user: { phone: PHONE } });
  await s.h.setPolicy(s.realm, { login: LOGIN });
  return { ...s, sms };
}

const mine = (s: Awaited<ReturnType<typeof setup>>) =>
  s.sms.received.filter((r) => r.body.to === PHONE && r.body.text.includes(s.realm.display_name));

describe('sign-in › SMS code', () => {
  test('case=a phone identifier gets a signed SMS through the gateway; the code signs in with factor sms', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const identified = await tx.step('identify', { identifier: PHONE });
    assert.deepEqual(actionTypes(identified.body), ['password', 'sms_otp']);
    assert.equal((await tx.step('otp/send', { purpose: 'login' })).status, 200);
    await deliverQueued(s.h);
    const [sms] = mine(s);
    assert.ok(sms, 'the gateway received the message');
    const ts = String(sms.headers['x-proudauth-timestamp']);
    assert.equal(sms.headers['x-proudauth-signature'], smsSignature(Buffer.from(SMS_TEST_KEY), ts, sms.raw));
    assert.equal(sms.headers['content-type'], 'application/json');
    const done = await tx.step('otp/verify', { code: smsCode(sms) });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['sms']);
  });

  test('case=the egress guard refuses a loopback gateway not on delivery.egress_allowlist', async (t) => {
    const s = await setup(t, false);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: PHONE });
    await tx.step('otp/send', { purpose: 'login' });
    const report = await deliverQueued(s.h);
    assert.equal(report.failed, 1, JSON.stringify(report));
    assert.equal(mine(s).length, 0);
    const [row] = await rows(s.h, `select state, last_error from notifications where realm_id = $1`, [
      s.realm.id,
    ]);
    assert.equal(row?.state, 'failed');
    assert.match(String(row?.last_error), /^egress_denied/);
  });

  test('case=a gateway 5xx is retried', async (t) => {
    const s = await setup(t);
    s.sms.failWith.push(503);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: PHONE });
    await tx.step('otp/send', { purpose: 'login' });
    assert.equal((await deliverQueued(s.h)).retry, 1);
    s.h.clock.advance(60_000);
    assert.equal((await deliverQueued(s.h)).sent, 1);
  });

  test('case=required action verify_contact: a code by SMS verifies the phone', async (t) => {
    const s = await setup(t);
    await s.h.ctx.db.query(
      `update users set required_actions = '{verify_contact}' where realm_id = $1 and id = $2`,
      [s.realm.id, s.user.id],
    );
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { identifier: 'alice@example.com', password: 'correct-horse-9' });
    assert.deepEqual(actionTypes(after.body), ['verify_contact']);
    await tx.step('otp/send', { purpose: 'verify_contact' });
    await deliverQueued(s.h);
    const [sms] = mine(s);
    assert.ok(sms);
    const done = await tx.step('otp/verify', { code: smsCode(sms) });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const [phone] = await rows(
      s.h,
      `select verified from user_identifiers where realm_id = $1 and type = 'phone'`,
      [s.realm.id],
    );
    assert.equal(phone?.verified, true);
  });
});
