import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { codeIn, deliverQueued, sendAndReceive, startMailSink } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  audits,
  count,
  provedThenRewound,
  REDIRECT,
  rows,
  signinSetup,
  userRow,
} from '../../harness/signin-kit.ts';

const LOGIN = { password: true, email_otp: true, identifiers: ['email', 'username'] };

async function setup(
  t: Parameters<typeof signinSetup>[0],
  login: Record<string, unknown> = LOGIN,
  overrides: Record<string, unknown> = {},
) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { overrides: { ...mail.overrides, ...overrides } });
  await s.h.setPolicy(s.realm, { login });
  return { ...s, mail };
}

/** Where alice's mail of this test's realm arrives. */
const alice = (s: { realm: { display_name: string } }) => ({
  to: 'alice@example.com',
  realm: s.realm.display_name,
});

const queued = (s: { h: Parameters<typeof count>[0]; realm: { id: string } }) =>
  count(s.h, 'select 1 from notifications where realm_id = $1', [s.realm.id]);

describe('sign-in › email code', () => {
  test('case=identify, send a code, read it from the mail, verify: signed in with factor otp', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.deepEqual(actionTypes(identified.body), ['password', 'email_otp']);
    const offered = identified.body.next_actions[1];
    assert.deepEqual(offered, {
      type: 'email_otp',
      required: false,
      fields: ['code'],
      options: { group: 'primary', purpose: 'login', code_sent: false },
    });
    assert.deepEqual(
      identified.body.next_actions.map((a: { required: boolean; options?: { group?: string } }) => [
        a.required,
        a.options?.group,
      ]),
      [
        [false, 'primary'],
        [false, 'primary'],
      ],
      'the password and the emailed code are alternatives',
    );
    const sent = await tx.step('otp/send', { purpose: 'login' });
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.equal(sent.body.next_actions[1].options.code_sent, true);
    assert.deepEqual(await deliverQueued(s.h), { sent: 1 });
    const mail = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    assert.match(mail.subject, /sign-in code/);
    const done = await tx.step('otp/verify', { code: codeIn(mail) });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.status, 'completed');
    assert.deepEqual(done.body.completed_factors, ['otp']);
  });

  test('case=a code lives tokens.challenge_ttl and belongs to its transaction', async (t) => {
    const s = await setup(t);
    const first = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await first.step('identify', { identifier: 'alice@example.com' });
    await first.step('otp/send', { purpose: 'login' });
    await deliverQueued(s.h);
    const code = codeIn(await s.mail.waitFor('alice@example.com', 1, s.realm.display_name));
    s.h.clock.advance(10 * 60_000 + 1000);
    // The transaction lives as long; a new one shows the old code is dead too.
    const late = await first.step('otp/verify', { code });
    assert.notEqual(late.body.status, 'completed');

    const second = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await second.step('identify', { identifier: 'alice@example.com' });
    await second.step('otp/send', { purpose: 'login' });
    await deliverQueued(s.h);
    const fresh = codeIn(await s.mail.waitFor('alice@example.com', 2, s.realm.display_name));
    const wrongTx = await first.step('otp/verify', { code: fresh });
    assert.notEqual(wrongTx.body.status, 'completed', 'a code belongs to its transaction');
    const ok = await second.step('otp/verify', { code: fresh });
    assert.equal(ok.body.status, 'completed');
  });

  test('case=a code is single use: once it verified, it never verifies again', async (t) => {
    const s = await setup(t);
    // MFA keeps the transaction pending after the code, so the question is the code's, not the transaction's.
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required', allowed_factors: ['totp'] } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const code = codeIn(await sendAndReceive(s.h, s.mail, tx, 'login', alice(s)));
    const proof = { path: 'otp/verify', body: { code }, factor: 'otp' };
    const state = await provedThenRewound(s.h, s.realm, tx, proof);
    assert.deepEqual(actionTypes(state.body), ['password', 'email_otp'], 'the code step is offered again');
    assert.equal(state.body.next_actions[1].options.code_sent, false, 'no live code is out');
    const again = await tx.step('otp/verify', { code });
    assert.equal(again.status, 409, JSON.stringify(again.body));
    assert.deepEqual((await tx.get()).body.completed_factors, []);
  });

  test('case=wrong codes spend the failure budget; the fifth fails the transaction', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    await tx.step('otp/send', { purpose: 'login' });
    await deliverQueued(s.h);
    const code = codeIn(await s.mail.waitFor('alice@example.com', 1, s.realm.display_name));
    const wrong = code === '000000' ? '111111' : '000000';
    let last = await tx.step('otp/verify', { code: wrong });
    assert.equal(last.body.status, 'pending');
    assert.equal((await audits(s.h, s.realm, 'signin.proof_failed')).at(-1)?.data.factor, 'otp');
    for (let i = 0; i < 4; i++) last = await tx.step('otp/verify', { code: wrong });
    assert.equal(last.body.status, 'failed');
    assert.equal(last.body.error, 'too_many_failures');
  });

  test('case=an unknown address gets the same answers, no mail, and no sign-in', async (t) => {
    const s = await setup(t);
    const known = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const unknown = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const a = await known.step('identify', { identifier: 'alice@example.com' });
    const b = await unknown.step('identify', { identifier: 'nobody@example.com' });
    assert.deepEqual(b.body.next_actions, a.body.next_actions);
    const sa = await known.step('otp/send', { purpose: 'login' });
    const sb = await unknown.step('otp/send', { purpose: 'login' });
    assert.equal(sb.status, sa.status);
    const strip = (x: Record<string, unknown>) => ({ ...x, id: 'x', expires_at: 'x' });
    assert.deepEqual(strip(sb.body), strip(sa.body));
    assert.equal(await queued(s), 1, 'only the known address is mailed');
    const vb = await unknown.step('otp/verify', { code: '123456' });
    assert.equal(vb.status, 200);
    assert.equal(vb.body.status, 'pending');
    assert.equal(vb.body.user, undefined);
  });

  test('case=padded like the password step: known and unknown addresses both wait the floor', async (t) => {
    // The harness turns the floor off; this test sets the shipped default back.
    const s = await setup(t, LOGIN, { 'security.min_auth_response': '250ms' });
    const floor = s.h.ctx.config.security.minAuthResponseMs;
    assert.equal(floor, 250);
    for (const identifier of ['alice@example.com', 'nobody@example.com']) {
      const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
      await tx.step('identify', { identifier });
      for (const [path, body] of [
        ['otp/send', { purpose: 'login' }],
        ['otp/verify', { code: '000001' }],
      ] as const) {
        const started = performance.now();
        const r = await tx.step(path, body);
        assert.equal(r.status, 200);
        assert.ok(
          performance.now() - started >= floor - 5,
          `${path} for ${identifier} answered before the floor`,
        );
      }
    }
  });

  test('case=password off and no method fits the identifier: login_method_not_allowed', async (t) => {
    const s = await setup(t, { password: false, email_otp: true });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    assert.deepEqual(actionTypes(tx.start.body.state), ['identify']);
    const byName = await tx.step('identify', { identifier: 'alice' });
    assert.equal(byName.body.status, 'pending');
    assert.deepEqual(byName.body.next_actions, []);
    assert.equal(byName.body.error, 'login_method_not_allowed');
  });

  test('case=more than five sends answer 429 rate_limited', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    for (let i = 0; i < 5; i++) assert.equal((await tx.step('otp/send', { purpose: 'login' })).status, 200);
    const refused = await tx.step('otp/send', { purpose: 'login' });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'rate_limited');
  });

  test('case=ten codes an hour per address over all transactions, known or not', async (t) => {
    const s = await setup(t);
    for (const identifier of ['alice@example.com', 'nobody@example.com']) {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
        await tx.step('identify', { identifier });
        for (let j = 0; j < 4; j++) statuses.push((await tx.step('otp/send', { purpose: 'login' })).status);
      }
      assert.deepEqual(statuses, [...Array(10).fill(200), 429, 429], identifier);
    }
    s.h.clock.advance(3_600_000 + 1000);
    const later = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await later.step('identify', { identifier: 'alice@example.com' });
    assert.equal((await later.step('otp/send', { purpose: 'login' })).status, 200);
  });

  test('case=not offered: login.email_otp off answers 409; unknown purpose 422', async (t) => {
    const s = await setup(t, { password: true });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.deepEqual(actionTypes(identified.body), ['password']);
    assert.equal((await tx.step('otp/send', { purpose: 'login' })).status, 409);
    const bad = await tx.step('otp/send', { purpose: 'sms' });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.code, 'validation_failed');
    assert.equal((await tx.step('otp/verify', { code: '123456' })).status, 409);
  });

  test('case=without a mail transport the email code is not offered', async (t) => {
    const s = await signinSetup(t);
    await s.h.setPolicy(s.realm, { login: LOGIN });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.deepEqual(actionTypes(identified.body), ['password']);
  });

  test('case=an email code is no second factor: MFA is still asked', async (t) => {
    const s = await setup(t);
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required', allowed_factors: ['totp'] } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const m = await sendAndReceive(s.h, s.mail, tx, 'login', alice(s));
    const after = await tx.step('otp/verify', { code: codeIn(m) });
    assert.equal(after.body.status, 'pending', JSON.stringify(after.body));
    assert.deepEqual(after.body.completed_factors, ['otp'], JSON.stringify(after.body));
    assert.deepEqual(actionTypes(after.body), ['enroll_totp']);
  });

  test('case=ui_locales de sends the German message', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { ui_locales: 'de-CH en' });
    await tx.step('identify', { identifier: 'alice@example.com' });
    await tx.step('otp/send', { purpose: 'login' });
    await deliverQueued(s.h);
    const mail = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    assert.match(mail.subject, /Anmeldecode/);
    assert.match(mail.text, /Ihr Anmeldecode lautet \d{6}/);
  });
});

describe('sign-in › email verification', () => {
  test('case=a pending_verification account verifies its address after the password, then is active', async (t) => {
    const s = await setup(t);
    const user = s.user;
    await s.h.ctx.db.query(
      `update users set state = 'pending_verification' where realm_id = $1 and id = $2`,
      [s.realm.id, user.id],
    );
    await s.h.ctx.db.query(
      `update user_identifiers set verified = false where realm_id = $1 and user_id = $2`,
      [s.realm.id, user.id],
    );
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { password: 'correct-horse-9', identifier: 'alice@example.com' });
    assert.deepEqual(actionTypes(after.body), ['verify_email']);
    assert.equal((await tx.step('otp/send', { purpose: 'verify_email' })).status, 200);
    await deliverQueued(s.h);
    const mail = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    assert.match(mail.subject, /Confirm your email/);
    const done = await tx.step('otp/verify', { code: codeIn(mail) });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['pwd'], 'verification is no factor');
    assert.equal((await userRow(s.h, s.realm, user.id)).state, 'active');
    const [idf] = await rows(
      s.h,
      `select verified from user_identifiers where realm_id = $1 and user_id = $2`,
      [s.realm.id, user.id],
    );
    assert.equal(idf?.verified, true);
  });

  test('case=no mail transport: a pending_verification account is account_unavailable', async (t) => {
    const s = await signinSetup(t);
    await s.h.ctx.db.query(
      `update users set state = 'pending_verification' where realm_id = $1 and id = $2`,
      [s.realm.id, s.user.id],
    );
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { password: 'correct-horse-9', identifier: 'alice@example.com' });
    assert.equal(after.body.status, 'pending');
    assert.deepEqual(after.body.next_actions, []);
    assert.equal(after.body.error, 'account_unavailable');
  });

  test('case=administrator-set verify_email is a required action after sign-in', async (t) => {
    const s = await setup(t);
    await s.h.ctx.db.query(
      `update users set required_actions = '{verify_email}' where realm_id = $1 and id = $2`,
      [s.realm.id, s.user.id],
    );
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { password: 'correct-horse-9', identifier: 'alice@example.com' });
    assert.deepEqual(actionTypes(after.body), ['verify_email']);
    await tx.step('otp/send', { purpose: 'verify_email' });
    await deliverQueued(s.h);
    const done = await tx.step('otp/verify', {
      code: codeIn(await s.mail.waitFor('alice@example.com', 1, s.realm.display_name)),
    });
    assert.equal(done.body.status, 'completed');
    assert.deepEqual((await userRow(s.h, s.realm, s.user.id)).required_actions, []);
  });
});
