import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { json, startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  audits,
  events,
  PASSWORD,
  REDIRECT,
  rows,
  signinSetup,
  txRow,
  userRow,
} from '../../harness/signin-kit.ts';

type Ctx = Parameters<typeof signinSetup>[0];

async function setup(t: Ctx, registration: Record<string, unknown>) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { overrides: mail.overrides });
  await s.h.setPolicy(s.realm, { registration: { require_email_verification: true, ...registration } });
  return { ...s, mail };
}

const NEW = { email: 'new@example.com', password: 'a-long-password', display_name: 'New Person' };

describe('registration', () => {
  test('case=closed by default: intent register is refused at the start', async (t) => {
    const s = await signinSetup(t);
    await assert.rejects(
      startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' }),
      /start failed: 400 .*access_denied/,
    );
  });

  test('case=open: register, verify the mailed code, signed in; user.created with created_via registration', async (t) => {
    const s = await setup(t, { mode: 'open' });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    assert.equal(tx.start.body.state.intent, 'register');
    assert.deepEqual(actionTypes(tx.start.body.state), ['register']);
    const registered = await tx.step('registration', NEW);
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    assert.deepEqual(actionTypes(registered.body), ['verify_email']);
    assert.deepEqual(registered.body.completed_factors, ['pwd']);
    const created = (await events(s.h, s.realm, 'user.created')).at(-1);
    assert.equal(created?.data.created_via, 'registration');
    const userId = created?.data.user_id as string;
    assert.equal((await userRow(s.h, s.realm, userId)).state, 'pending_verification');
    await tx.step('otp/send', { purpose: 'verify_email' });
    await deliverQueued(s.h);
    const done = await tx.step('otp/verify', {
      code: codeIn(await s.mail.waitFor('new@example.com', 1, s.realm.display_name)),
    });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal((await userRow(s.h, s.realm, userId)).state, 'active');
    assert.equal(done.body.user.display_name, 'New Person');
  });

  test('case=without require_email_verification the account is active at once', async (t) => {
    const s = await setup(t, { mode: 'open', require_email_verification: false });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const done = await tx.step('registration', NEW);
    assert.equal(done.body.status, 'completed');
  });

  test('case=POST /registrations with transaction_id does the same', async (t) => {
    const s = await setup(t, { mode: 'open', require_email_verification: false });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const res = await json(
      await s.h.get(`/api/v1/realms/${s.realm.name}/registrations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-transaction-token': tx.token },
        body: JSON.stringify({ transaction_id: tx.id, ...NEW }),
      }),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'completed');
    const noToken = await json(
      await s.h.get(`/api/v1/realms/${s.realm.name}/registrations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ transaction_id: tx.id, ...NEW }),
      }),
    );
    assert.notEqual(noToken.status, 200, 'the transaction id alone authorizes nothing');
  });

  test('case=validation: short password, unknown member, taken username', async (t) => {
    const s = await setup(t, { mode: 'open' });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const short = await tx.step('registration', { ...NEW, password: 'short' });
    assert.equal(short.status, 422);
    assert.equal(short.body.code, 'validation_failed');
    assert.deepEqual(short.body.errors, [{ field: 'password', code: 'too_short' }]);
    const unknown = await tx.step('registration', { ...NEW, admin: true });
    assert.equal(unknown.status, 400);
    await tx.step('registration', { ...NEW, username: 'newbie' });
    const other = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const taken = await other.step('registration', {
      ...NEW,
      email: 'other@example.com',
      username: 'NEWBIE',
    });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.code, 'conflict');
  });

  test('case=verification asked but no mail transport: 503, and no account is created', async (t) => {
    const s = await signinSetup(t);
    await s.h.setPolicy(s.realm, { registration: { mode: 'open', require_email_verification: true } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const refused = await tx.step('registration', NEW);
    assert.equal(refused.status, 503);
    assert.equal(refused.body.code, 'temporarily_unavailable');
    assert.equal((await events(s.h, s.realm, 'user.created')).length, 1, 'only alice');
  });

  test('case=domain_restricted accepts only allowed_domains', async (t) => {
    const s = await setup(t, { mode: 'domain_restricted', allowed_domains: ['corp.example'] });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const refused = await tx.step('registration', NEW);
    assert.equal(refused.status, 422);
    assert.deepEqual(refused.body.errors, [{ field: 'email', code: 'domain_not_allowed' }]);
    const ok = await tx.step('registration', { ...NEW, email: 'new@Corp.Example' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  test('case=approval: held with registration_pending_approval until an administrator approves; deny suspends', async (t) => {
    const s = await setup(t, { mode: 'open', require_approval: true, require_email_verification: false });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const held = await tx.step('registration', NEW);
    assert.equal(held.body.status, 'pending');
    assert.deepEqual(held.body.next_actions, []);
    assert.equal(held.body.error, 'registration_pending_approval');

    const admin = await apiCaller(s.h, s.realm);
    const list = await json(await admin.call('GET', '/registrations'));
    assert.equal(list.status, 200);
    assert.equal(list.body.items.length, 1);
    const userId = list.body.items[0].user_id;
    const approved = await json(await admin.call('POST', `/registrations/${userId}/approve`, {}));
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    assert.equal((await admin.call('POST', `/registrations/${userId}/approve`, {})).status, 404);
    const again = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const signedIn = await again.step('password', { identifier: NEW.email, password: NEW.password });
    assert.equal(signedIn.body.status, 'completed');

    const other = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    await other.step('registration', { ...NEW, email: 'second@example.com' });
    const second = (await json(await admin.call('GET', '/registrations'))).body.items[0].user_id;
    assert.equal((await admin.call('POST', `/registrations/${second}/deny`, {})).status, 200);
    assert.equal((await userRow(s.h, s.realm, second)).state, 'suspended');
    const suspended = await events(s.h, s.realm, 'user.suspended');
    assert.equal(suspended.at(-1)?.data.user_id, second);
  });
});

/** A state with what differs between two transactions (ids, times, the masked address) set aside. */
const shape = (body: Record<string, unknown>) => {
  const user = body.user as { email_hint?: string } | undefined;
  return {
    ...body,
    id: 'x',
    expires_at: 'x',
    ...(user ? { user: { ...user, email_hint: user.email_hint?.replace(/^.\*\*\*/, '?***') } } : {}),
  };
};

/** Registers `email` in a fresh transaction and returns it with the answer. */
async function registerAs(
  s: Awaited<ReturnType<typeof setup>>,
  email: string,
  extra: Record<string, unknown> = {},
) {
  const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register', ...extra });
  return { tx, answer: await tx.step('registration', { ...NEW, email }) };
}

describe('registration › an address that has an account (ASVS 5.0 V6.3.8)', () => {
  test('case=the same answers as a new address, no account, and the owner is told by mail', async (t) => {
    const s = await setup(t, { mode: 'open' });
    const fresh = await registerAs(s, 'new@example.com');
    const taken = await registerAs(s, 'alice@example.com');
    assert.equal(taken.answer.status, fresh.answer.status, JSON.stringify(taken.answer.body));
    assert.deepEqual(shape(taken.answer.body), shape(fresh.answer.body));
    assert.deepEqual(actionTypes(taken.answer.body), ['verify_email']);
    assert.deepEqual(shape((await taken.tx.get()).body), shape((await fresh.tx.get()).body));
    const sentFresh = await fresh.tx.step('otp/send', { purpose: 'verify_email' });
    const sentTaken = await taken.tx.step('otp/send', { purpose: 'verify_email' });
    assert.equal(sentTaken.status, sentFresh.status);
    assert.deepEqual(shape(sentTaken.body), shape(sentFresh.body));

    await deliverQueued(s.h);
    const notice = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    assert.match(notice.subject, /Someone tried to register with your address/);
    assert.doesNotMatch(notice.text, /\b\d{6}\b/, 'the notice carries no code');
    await s.mail.waitFor('new@example.com', 1, s.realm.display_name);
    assert.equal(
      s.mail.received.filter((m) => m.to === 'alice@example.com').length,
      1,
      'no code to the owner',
    );
    // No code works in the stand-in transaction: a wrong code there is a failed proof like anywhere.
    const tried = await taken.tx.step('otp/verify', { code: '123456' });
    assert.equal(tried.status, 200);
    assert.equal(tried.body.status, 'pending');
    assert.deepEqual(actionTypes(tried.body), ['verify_email']);
    assert.equal((await txRow(s.h, s.realm, taken.tx.id)).failures, 1);

    const created = await events(s.h, s.realm, 'user.created');
    assert.deepEqual(
      created.map((e) => e.data.user_id === s.user.id),
      [true, false],
      'alice and the new address only',
    );
    const [audit] = await audits(s.h, s.realm, 'signin.registration_address_taken');
    assert.equal(audit?.subject_id, s.user.id);
    assert.equal(audit?.data.owner_notified, true);
    // The owner's account is untouched: the password typed in the registration is not hers.
    const own = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const signedIn = await own.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(signedIn.body.status, 'completed');
  });

  test('case=the notice follows ui_locales, and an address gets at most three an hour', async (t) => {
    const s = await setup(t, { mode: 'open' });
    for (let i = 0; i < 4; i++) {
      const again = await registerAs(s, 'alice@example.com', { ui_locales: 'de' });
      assert.deepEqual(actionTypes(again.answer.body), ['verify_email']);
    }
    await deliverQueued(s.h);
    const notice = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    assert.match(notice.subject, /Registrierungsversuch/);
    const notified = await audits(s.h, s.realm, 'signin.registration_address_taken');
    assert.deepEqual(notified.map((a) => a.data.owner_notified).sort(), [false, true, true, true]);
  });

  test('case=held for approval: the same blocked answer for both', async (t) => {
    const s = await setup(t, { mode: 'open', require_approval: true, require_email_verification: false });
    const fresh = await registerAs(s, 'new@example.com');
    const taken = await registerAs(s, 'alice@example.com');
    assert.equal(taken.answer.body.error, 'registration_pending_approval');
    assert.deepEqual(shape(taken.answer.body), shape(fresh.answer.body));
  });

  test('case=a realm that neither verifies nor holds signs new accounts in at once: a taken address is 409', async (t) => {
    const s = await setup(t, { mode: 'open', require_email_verification: false });
    const taken = await registerAs(s, 'ALICE@example.com');
    assert.equal(taken.answer.status, 409);
    assert.equal(taken.answer.body.code, 'conflict');
  });
});

describe('guests', () => {
  test('case=allow_guests: the guest step signs in with factor anon; otherwise guest_not_permitted', async (t) => {
    const s = await signinSetup(t);
    const refused = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const no = await refused.step('guest', {});
    assert.equal(no.status, 409);
    assert.equal(no.body.error, 'guest_not_permitted');
    await s.h.setPolicy(s.realm, { registration: { mode: 'closed', allow_guests: true } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const done = await tx.step('guest', {});
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['anon']);
    const created = (await events(s.h, s.realm, 'user.created')).at(-1);
    assert.equal(created?.data.created_via, 'guest');
    assert.equal((await userRow(s.h, s.realm, created?.data.user_id)).is_guest, true);
  });
});

describe('required actions', () => {
  test('case=accept_terms: the current version is accepted once and kept', async (t) => {
    const s = await signinSetup(t);
    await s.h.setPolicy(s.realm, { interaction: { terms_version: '2026-01' } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { identifier: 'alice@example.com', password: 'correct-horse-9' });
    assert.deepEqual(after.body.next_actions, [
      { type: 'accept_terms', required: true, fields: ['version'], options: { version: '2026-01' } },
    ]);
    const old = await tx.step('terms', { version: '2025-01' });
    assert.equal(old.status, 422);
    const done = await tx.step('terms', { version: '2026-01' });
    assert.equal(done.body.status, 'completed');
    const kept = await rows(s.h, 'select version from terms_acceptances where realm_id = $1', [s.realm.id]);
    assert.deepEqual(
      kept.map((r) => r.version),
      ['2026-01'],
    );
  });

  test('case=complete_profile asks the required user-editable attributes only', async (t) => {
    const s = await signinSetup(t);
    await s.h.setPolicy(s.realm, {
      profile: {
        attributes: [{ name: 'company' }, { name: 'cost_center', user_editable: false }],
        required_fields: ['company', 'cost_center'],
      },
    });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { identifier: 'alice@example.com', password: 'correct-horse-9' });
    assert.deepEqual(after.body.next_actions, [
      { type: 'complete_profile', required: true, fields: ['fields'], options: { fields: ['company'] } },
    ]);
    const locked = await tx.step('profile', { fields: { company: 'ACME', cost_center: '42' } });
    assert.equal(locked.status, 422);
    assert.deepEqual(locked.body.errors, [{ field: 'fields.cost_center', code: 'not_editable' }]);
    const empty = await tx.step('profile', { fields: {} });
    assert.deepEqual(empty.body.errors, [{ field: 'fields.company', code: 'required' }]);
    const done = await tx.step('profile', { fields: { company: 'ACME' } });
    assert.equal(done.body.status, 'completed');
    assert.deepEqual((await userRow(s.h, s.realm, s.user.id)).attributes, { company: 'ACME' });
  });

  test('case=a pending_deletion account stops at cancel_deletion, which returns it to active', async (t) => {
    const s = await signinSetup(t);
    await s.h.ctx.db.query(
      `update users set state = 'pending_deletion', deletion_due_at = now() + interval '30 days'
        where realm_id = $1 and id = $2`,
      [s.realm.id, s.user.id],
    );
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const after = await tx.step('password', { identifier: 'alice@example.com', password: 'correct-horse-9' });
    assert.deepEqual(actionTypes(after.body), ['cancel_deletion']);
    const done = await tx.step('cancel-deletion', {});
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const user = await userRow(s.h, s.realm, s.user.id);
    assert.equal(user.state, 'active');
    assert.equal(user.deletion_due_at, null);
  });
});
