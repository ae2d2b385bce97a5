// Assisted recovery through HTTP (document 1 "Assisted recovery request", "Recovery and account
// administration", the /me rows; docs/recovery.md): immediate and cooling-off modes, the second
// approver, the owner's view and cancel, the re-checks of the due task, expiry, the task under its
// lease across two workers, the mail to the owner and the setup link followed to a new password
// and a TOTP enrollment.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import { Scheduler } from '../../../src/main/worker/scheduler.ts';
import { TASKS, type WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { createLogger } from '../../../src/platform/log.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller, CLI_REDIRECT } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { deliverQueued, linkIn, type MailSink, startMailSink } from '../../harness/mail-kit.ts';
import { json, startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, audits, count, PASSWORD, rows, totpCode } from '../../harness/signin-kit.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const OWNER = 'owner@example.com';

interface Setup {
  h: Harness;
  realm: RealmRow;
  mail: MailSink;
  ownerId: string;
  owner: ApiCallerKit;
  operator: ApiCallerKit;
  approver: ApiCallerKit;
  /** One run of recovery.assisted_due as a worker would run it, at the harness clock. */
  due(): Promise<Record<string, number>>;
}

const dueTask = () => {
  const task = TASKS.find((x) => x.name === 'recovery.assisted_due');
  if (!task) throw new Error('no task recovery.assisted_due');
  return task;
};

async function setup(t: TestContext, policy?: Record<string, unknown>): Promise<Setup> {
  const mail = await startMailSink(t);
  const h = await startHarness(t, { overrides: mail.overrides });
  const realm = await h.createRealm();
  if (policy) await h.setPolicy(realm, { recovery: policy });
  // The owner signs in once with an authenticator app (configure_totp), as someone with MFA does.
  const user = await h.createUser(realm, {
    email: OWNER,
    password: PASSWORD,
    emailVerified: true,
    requiredActions: ['configure_totp'],
  });
  const owner = await apiCaller(h, realm, { audience: 'account', userId: user.id });
  const operator = await apiCaller(h, realm, { email: 'operator@example.com' });
  const approver = await apiCaller(h, realm, { email: 'approver@example.com' });
  const deps = workerDeps(h.ctx) as WorkerDeps;
  return {
    h,
    realm,
    mail,
    ownerId: user.id,
    owner,
    operator,
    approver,
    due: async () => dueTask().run(deps, h.clock.now()),
  };
}

async function request(s: Setup, extra: Record<string, unknown> = {}) {
  return json(
    await s.operator.call('POST', `/users/${s.ownerId}/recovery-requests`, {
      reason: 'lost phone and password; identity checked by video call',
      evidence_reference: 'TICKET-4711',
      reset_mfa: true,
      ...extra,
    }),
  );
}

const recoveryRow = async (s: Setup, id: string) =>
  (await rows(s.h, 'select * from assisted_recoveries where realm_id = $1 and id = $2', [s.realm.id, id]))[0];

const factorsOf = async (s: Setup) => ({
  totp: await count(s.h, 'select 1 from totp_credentials where realm_id = $1 and user_id = $2', [
    s.realm.id,
    s.ownerId,
  ]),
  actions: (
    await rows(s.h, 'select required_actions from users where realm_id = $1 and id = $2', [
      s.realm.id,
      s.ownerId,
    ])
  )[0]?.required_actions,
});

/** The setup link's mail, delivered from the queue; the token read out of its link. */
async function setupMail(s: Setup, n: number) {
  await deliverQueued(s.h);
  const m = await s.mail.waitFor(OWNER, n);
  const link = new URL(linkIn(m));
  return { mail: m, token: link.searchParams.get('recovery_setup') ?? '', link };
}

const setupPassword = async (s: Setup, token: string, password: string) =>
  s.h.get(`/api/v1/realms/${s.realm.name}/recovery-setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password }),
  });

/** The recovered owner signs in with the new password: an authenticator app must be enrolled first. */
async function signInMustEnrollTotp(s: Setup, password: string) {
  const tx = await startHeadless(s.h, s.realm.name, CLI_CLIENT_ID, CLI_REDIRECT, { scope: 'openid' });
  assert.equal((await tx.step('identify', { identifier: OWNER })).status, 200);
  const afterPassword = await tx.step('password', { password });
  assert.equal(afterPassword.status, 200, JSON.stringify(afterPassword.body));
  assert.deepEqual(actionTypes(afterPassword.body), ['enroll_totp']);
  const enrolled = await tx.step('totp/enroll', {});
  const secret: string = enrolled.body.one_time.totp.secret;
  const done = await tx.step('totp/activate', { code: totpCode(secret, s.h.clock.now()) });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
}

test('case=immediate mode: factors taken, configure_totp set, sessions revoked into the revocation log, the setup link mailed and followed', async (t) => {
  const s = await setup(t);
  assert.equal(await factorsOf(s).then((f) => f.totp), 1, 'the owner has an authenticator app');
  const r = await request(s);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.status, 'executed');
  assert.equal(r.body.approval_required, false);
  const row = await recoveryRow(s, r.body.recovery_id);
  assert.equal(row?.mode, 'immediate');
  assert.deepEqual(await factorsOf(s), { totp: 0, actions: ['configure_totp'] });
  // The owner's session ended: its token is refused, and the revocation log holds the session.
  assert.equal((await s.owner.call('GET', '/me/assisted-recoveries')).status, 401);
  assert.equal(
    await count(
      s.h,
      `select 1 from revocation_log where realm_id = $1 and kind = 'revocation'
          and record->>'target' = 'session' and record->>'session_id' = $2 and record->>'reason' = 'assisted_recovery'`,
      [s.realm.id, s.owner.sessionId],
    ),
    1,
  );
  const [audit] = await audits(s.h, s.realm, 'recovery.assisted');
  assert.equal(audit?.actor_id, s.operator.userId);
  assert.equal(audit?.data.reset_mfa, true);
  assert.equal(
    await count(
      s.h,
      `select 1 from outbox where realm_id = $1 and event_type = 'security.alert'
                       and data->>'signal' = 'factor_recovery'`,
      [s.realm.id],
    ),
    1,
  );
  // A second request while none is open is fine; the recovered owner follows the link.
  const { mail, token, link } = await setupMail(s, 1);
  assert.match(mail.subject, /Set up your .* account again/);
  assert.equal(link.searchParams.get('realm'), s.realm.name);
  assert.equal((await setupPassword(s, token, 'a-brand-new-secret-42')).status, 204);
  assert.equal((await setupPassword(s, token, 'another-new-secret-43')).status, 404, 'single use');
  await signInMustEnrollTotp(s, 'a-brand-new-secret-42');
  assert.equal((await audits(s.h, s.realm, 'user.password_reset')).length, 1);
});

test('case=refusals: reset_mfa needs credentials.manage, an unverified address answers 409 contact_unverified, own account and bad input refused', async (t) => {
  const s = await setup(t);
  const support = await apiCaller(s.h, s.realm, { roles: [], email: 'support@example.com' });
  const noPermission = await json(
    await support.call('POST', `/users/${s.ownerId}/recovery-requests`, { reason: 'x', reset_mfa: false }),
  );
  assert.equal(noPermission.status, 403);
  const self = await json(
    await s.operator.call('POST', `/users/${s.operator.userId}/recovery-requests`, { reason: 'me' }),
  );
  assert.equal(self.status, 403);
  const unknownMember = await request(s, { extra: 1 });
  assert.equal(unknownMember.status, 400);
  assert.equal(unknownMember.body.code, 'invalid_request');
  const noReason = await json(await s.operator.call('POST', `/users/${s.ownerId}/recovery-requests`, {}));
  assert.equal(noReason.status, 422);
  await s.h.ctx.db.query(
    `update user_identifiers set verified = false where realm_id = $1 and user_id = $2`,
    [s.realm.id, s.ownerId],
  );
  const unverified = await request(s);
  assert.equal(unverified.status, 409);
  assert.equal(unverified.body.code, 'contact_unverified');
  assert.equal(await count(s.h, 'select 1 from assisted_recoveries where realm_id = $1', [s.realm.id]), 0);
});

test('case=done when: cooling-off with a second approver; requester and owner cannot approve; the owner is mailed and sees it; after the period the task recovers the account', async (t) => {
  const s = await setup(t, { cooling_off_hours: 24, require_approval: true });
  const asked = s.h.clock.now().getTime();
  const r = await request(s);
  const answered = s.h.clock.now().getTime();
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.status, 'recovery_scheduled');
  assert.equal(r.body.approval_required, true);
  const effective = Date.parse(r.body.effective_at);
  assert.ok(effective >= asked + DAY && effective <= answered + DAY, r.body.effective_at);
  const id: string = r.body.recovery_id;
  assert.equal((await request(s)).status, 409, 'one open request per account');

  // The owner is told at once, in a mail that says how to cancel, and sees the request.
  await deliverQueued(s.h);
  const told = await s.mail.waitFor(OWNER, 1);
  assert.match(told.subject, /Recovery of your .* account was requested/);
  assert.match(told.text, /cancel/);
  const view = await json(await s.owner.call('GET', '/me/assisted-recoveries'));
  assert.equal(view.status, 200);
  assert.deepEqual(
    view.body.items.map((x: Record<string, unknown>) => [x.recovery_id, x.status, x.approval_required]),
    [[id, 'scheduled', true]],
  );

  // Approval: never by the requester, never by the owner (who holds no admin token anyway, so an
  // administrator who is the owner is tried: the owner made realm-admin).
  const byRequester = await s.operator.call('POST', `/assisted-recoveries/${id}/approve`);
  assert.equal(byRequester.status, 403);
  const ownerAdmin = await apiCaller(s.h, s.realm, { userId: s.ownerId });
  assert.equal((await ownerAdmin.call('POST', `/assisted-recoveries/${id}/approve`)).status, 403);
  // Not approved yet: nothing happens even after the period.
  const approved = await json(await s.approver.call('POST', `/assisted-recoveries/${id}/approve`));
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  assert.equal(approved.body.status, 'approved');
  assert.equal((await s.approver.call('POST', `/assisted-recoveries/${id}/approve`)).status, 409);

  assert.equal((await s.due()).executed, 0);
  assert.equal((await recoveryRow(s, id))?.status, 'approved', 'not before effective_at');
  s.h.clock.advance(DAY);
  assert.equal((await s.due()).executed, 1);
  assert.equal((await recoveryRow(s, id))?.status, 'executed');
  assert.deepEqual(await factorsOf(s), { totp: 0, actions: ['configure_totp'] });
  const [done] = await audits(s.h, s.realm, 'recovery.assisted');
  assert.equal(done?.actor_type, 'system');
  assert.equal(done?.data.approved_by_id, s.approver.userId);
  for (const type of ['recovery.assisted.scheduled', 'recovery.assisted.approved'])
    assert.equal((await audits(s.h, s.realm, type)).length, 1, type);

  const { token } = await setupMail(s, 2);
  assert.equal((await setupPassword(s, token, 'recovered-at-last-77')).status, 204);
  await signInMustEnrollTotp(s, 'recovered-at-last-77');
});

test('case=the owner cancels during the cooling-off period; the task then does nothing', async (t) => {
  const s = await setup(t, { cooling_off_hours: 48 });
  const r = await request(s, { reset_mfa: false });
  assert.equal(r.status, 202);
  assert.equal(r.body.approval_required, false);
  const id: string = r.body.recovery_id;
  const other = await apiCaller(s.h, s.realm, { audience: 'account', email: 'other@example.com' });
  assert.equal((await other.call('POST', `/me/assisted-recoveries/${id}/cancel`)).status, 404);
  const cancelled = await json(await s.owner.call('POST', `/me/assisted-recoveries/${id}/cancel`));
  assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.equal(cancelled.body.status, 'cancelled');
  assert.equal((await s.owner.call('POST', `/me/assisted-recoveries/${id}/cancel`)).status, 409);
  const [audit] = await audits(s.h, s.realm, 'recovery.assisted.cancelled');
  assert.equal(audit?.actor_id, s.ownerId);
  s.h.clock.advance(3 * DAY);
  assert.equal((await s.due()).executed, 0);
  assert.equal((await factorsOf(s)).totp, 1, 'the account keeps its authenticator');
});

test('case=re-checks when due: each failure cancels with its code and actor system', async (t) => {
  const s = await setup(t, { cooling_off_hours: 1 });
  const cancelledWith = async (id: string) => {
    const row = await recoveryRow(s, id);
    assert.equal(row?.status, 'cancelled');
    return row?.cancel_reason;
  };

  // requester_no_longer_authorized: the operator's role is taken away.
  const a = await request(s);
  await s.h.ctx.db.query(`delete from role_assignments where realm_id = $1 and subject_id = $2`, [
    s.realm.id,
    s.operator.userId,
  ]);
  s.h.clock.advance(HOUR);
  assert.equal((await s.due()).requester_no_longer_authorized, 1);
  assert.equal(await cancelledWith(a.body.recovery_id), 'requester_no_longer_authorized');

  // contact_unverified: the primary address is no longer verified when it comes due.
  const operator2 = await apiCaller(s.h, s.realm, { email: 'operator2@example.com' });
  const b = await json(
    await operator2.call('POST', `/users/${s.ownerId}/recovery-requests`, { reason: 'second try' }),
  );
  assert.equal(b.status, 202, JSON.stringify(b.body));
  await s.h.ctx.db.query(
    `update user_identifiers set verified = false where realm_id = $1 and user_id = $2`,
    [s.realm.id, s.ownerId],
  );
  s.h.clock.advance(HOUR);
  assert.equal((await s.due()).contact_unverified, 1);
  assert.equal(await cancelledWith(b.body.recovery_id), 'contact_unverified');
  await s.h.ctx.db.query(`update user_identifiers set verified = true where realm_id = $1 and user_id = $2`, [
    s.realm.id,
    s.ownerId,
  ]);

  // account_unavailable: the owner asked for the account's deletion meanwhile.
  const operator3 = await apiCaller(s.h, s.realm, { email: 'operator3@example.com' });
  const c = await json(
    await operator3.call('POST', `/users/${s.ownerId}/recovery-requests`, { reason: 'third try' }),
  );
  assert.equal(c.status, 202, JSON.stringify(c.body));
  const owner = await apiCaller(s.h, s.realm, { audience: 'account', userId: s.ownerId });
  assert.equal((await owner.call('POST', '/me/deletion', {})).status, 202);
  s.h.clock.advance(HOUR);
  assert.equal((await s.due()).account_unavailable, 1);
  assert.equal(await cancelledWith(c.body.recovery_id), 'account_unavailable');

  const cancels = await audits(s.h, s.realm, 'recovery.assisted.cancelled');
  assert.deepEqual(
    cancels.map((x) => [x.actor_type, x.reason]),
    [
      ['system', 'requester_no_longer_authorized'],
      ['system', 'contact_unverified'],
      ['system', 'account_unavailable'],
    ],
  );
  assert.equal((await audits(s.h, s.realm, 'recovery.assisted')).length, 0);
});

test('case=an unapproved request expires seven days after effective_at; deleting the account cancels an open one', async (t) => {
  const s = await setup(t, { cooling_off_hours: 2, require_approval: true });
  const r = await request(s);
  const id: string = r.body.recovery_id;
  s.h.clock.advance(2 * HOUR + 7 * DAY - 1000);
  assert.equal((await s.due()).expired, 0);
  s.h.clock.advance(1000);
  assert.equal((await s.due()).expired, 1);
  assert.equal((await recoveryRow(s, id))?.status, 'expired');
  assert.equal((await audits(s.h, s.realm, 'recovery.assisted.expired')).length, 1);

  const admin = await apiCaller(s.h, s.realm, { email: 'admin2@example.com' });
  const again = await json(
    await admin.call('POST', `/users/${s.ownerId}/recovery-requests`, { reason: 'once more' }),
  );
  assert.equal(again.status, 202, JSON.stringify(again.body));
  assert.equal((await admin.call('DELETE', `/users/${s.ownerId}`)).status, 204);
  const row = await recoveryRow(s, again.body.recovery_id);
  assert.equal(row?.status, 'cancelled');
  assert.equal(row?.reason, null, 'the erasure takes the reason');
});

test('case=two workers: the task runs once under its lease and the recovery executes once', async (t) => {
  const s = await setup(t, { cooling_off_hours: 1 });
  const r = await request(s);
  s.h.clock.advance(HOUR);
  const log = createLogger('silent');
  const deps = workerDeps(s.h.ctx);
  const worker = (holder: string) =>
    new Scheduler(s.h.ctx.db, deps, [dueTask()], () => s.h.clock.now(), log, { onRun: () => {} }, holder);
  const a = worker('worker-a');
  const b = worker('worker-b');
  const first = await a.runOnce(dueTask());
  const second = await b.runOnce(dueTask());
  assert.equal(first?.executed, 1);
  assert.equal(second, null, 'the other worker waits for the lease');
  assert.equal((await recoveryRow(s, r.body.recovery_id))?.status, 'executed');
  assert.equal((await audits(s.h, s.realm, 'recovery.assisted')).length, 1);
  assert.equal(
    await count(s.h, `select 1 from notifications where realm_id = $1 and template = 'recovery_setup'`, [
      s.realm.id,
    ]),
    1,
  );
});
