// Second factors in headless sign-ins: TOTP enrollment and use, replay refusal, recovery codes and
// the recovery_restricted account state.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import {
  actionTypes,
  audits,
  count,
  enrollTotp,
  events,
  movableClock,
  nextTotpStep,
  passwordSignIn,
  rows,
  sessionOfTx,
  signinSetup,
  totpCode,
  txRow,
  userRow,
  wrongTotpCode,
} from '../../harness/signin-kit.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';

const setup = (t: TestContext) => signinSetup(t, { clock: movableClock() });

describe('sign-in › TOTP', () => {
  test('case=first sign-in with configure_totp enrolls, shows recovery codes once and completes/mode=headless', async (t) => {
    const { h, realm, user, clock } = await signinSetup(t, {
      clock: movableClock(),
      user: { email: 'carol@example.com', requiredActions: ['configure_totp'] },
    });
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'carol@example.com');
    assert.equal(state.body.status, 'pending');
    assert.deepEqual(state.body.next_actions, [{ type: 'enroll_totp', required: true, fields: [] }]);

    const early = await tx.step('totp/activate', { code: '123456' });
    assert.equal(early.status, 409, 'activation needs an enrollment first');

    const enrolled = await tx.step('totp/enroll', {});
    assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
    assert.equal(enrolled.body.status, 'pending');
    const { secret, otpauth_uri: uri } = enrolled.body.one_time.totp;
    assert.match(secret, /^[A-Z2-7]{32}$/);
    const parsed = new URL(uri);
    assert.equal(parsed.protocol, 'otpauth:');
    assert.equal(parsed.searchParams.get('secret'), secret);
    assert.equal(parsed.searchParams.get('period'), '30');
    assert.equal(await count(h, 'select 1 from totp_credentials where realm_id = $1', [realm.id]), 0);
    const again = await tx.get();
    assert.equal(again.body.one_time, undefined, 'the secret is shown once');

    const wrong = await tx.step('totp/activate', { code: wrongTotpCode(secret, clock.now()) });
    assert.equal(wrong.body.status, 'pending');
    assert.equal(await count(h, 'select 1 from totp_credentials where realm_id = $1', [realm.id]), 0);
    assert.equal((await txRow(h, realm, tx.id)).failures, 1);

    const activated = await tx.step('totp/activate', { code: totpCode(secret, clock.now()) });
    assert.equal(activated.body.status, 'completed', JSON.stringify(activated.body));
    const codes: string[] = activated.body.one_time.recovery_codes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    assert.deepEqual(activated.body.completed_factors, ['pwd', 'totp']);
    assert.deepEqual((await userRow(h, realm, user.id)).required_actions, []);
    assert.equal(await count(h, 'select 1 from totp_credentials where realm_id = $1', [realm.id]), 1);
    const stored = await rows(h, 'select code_digest from recovery_codes where realm_id = $1', [realm.id]);
    assert.equal(stored.length, 10);
    assert.ok(
      stored.every((r) => !codes.includes(r.code_digest)),
      'recovery codes are stored as digests',
    );
    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.equal(session?.mfa, true);
    assert.equal(session?.acr, 'mfa');
    assert.equal((await txRow(h, realm, tx.id)).pending_totp_sealed, null);
  });

  test('case=password and TOTP complete with an MFA session/mode=headless', async (t) => {
    const { h, realm, clock } = await setup(t);
    const { secret } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
    nextTotpStep(clock);

    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(state.body.status, 'pending');
    // Either one answers MFA: alternatives of one group, neither required on its own.
    assert.deepEqual(state.body.next_actions, [
      { type: 'totp', required: false, fields: ['code'], options: { group: 'mfa' } },
      { type: 'recovery_code', required: false, fields: ['code'], options: { group: 'mfa' } },
    ]);
    assert.deepEqual(state.body.completed_factors, ['pwd']);
    const codesBefore = await count(h, 'select 1 from authorization_codes where realm_id = $1', [realm.id]);

    const wrong = await tx.step('totp', { code: wrongTotpCode(secret, clock.now()) });
    assert.equal(wrong.body.status, 'pending');
    assert.equal(
      await count(h, 'select 1 from authorization_codes where realm_id = $1', [realm.id]),
      codesBefore,
    );

    const done = await tx.step('totp', { code: totpCode(secret, clock.now()) });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['pwd', 'totp']);
    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.deepEqual(session?.amr, ['pwd', 'totp']);
    assert.equal(session?.acr, 'mfa');
    assert.equal(session?.mfa, true);
    const [code] = await rows(
      h,
      'select amr from authorization_codes where realm_id = $1 and transaction_id = $2',
      [realm.id, tx.id],
    );
    assert.deepEqual(code?.amr, ['pwd', 'totp']);
  });

  test('case=a TOTP code is accepted once, even across two transactions/mode=headless', async (t) => {
    const { h, realm, clock } = await setup(t);
    const { secret } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);

    // The activation code's step is spent too: the same code cannot sign in right after.
    const afterEnroll = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const replayedActivation = await afterEnroll.tx.step('totp', { code: totpCode(secret, clock.now()) });
    assert.equal(replayedActivation.body.status, 'pending');

    nextTotpStep(clock);
    const code = totpCode(secret, clock.now());
    const first = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const second = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const accepted = await first.tx.step('totp', { code });
    assert.equal(accepted.body.status, 'completed');
    const signedIn = (await events(h, realm, 'user.signed_in')).length;

    const replay = await second.tx.step('totp', { code });
    assert.equal(replay.body.status, 'pending');
    assert.deepEqual(actionTypes(replay.body), ['totp', 'recovery_code']);
    assert.equal((await txRow(h, realm, second.tx.id)).failures, 1, 'a replay spends failure budget');
    assert.equal((await events(h, realm, 'user.signed_in')).length, signedIn);

    // Same transaction, same code twice: the second presentation is refused as well.
    nextTotpStep(clock);
    const fresh = totpCode(secret, clock.now());
    const third = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal((await third.tx.step('totp', { code: fresh })).body.status, 'completed');
    const repeat = await third.tx.step('totp', { code: fresh });
    assert.equal(repeat.status, 409, 'a completed transaction takes no more steps');
  });

  test('case=two transactions racing with one TOTP code: exactly one completes/mode=headless', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { h, realm, clock } = await setup(t);
    const { secret } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
    nextTotpStep(clock);
    const a = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const b = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const signedInBefore = (await events(h, realm, 'user.signed_in')).length;
    const code = totpCode(secret, clock.now());
    const results = await Promise.all([a.tx.step('totp', { code }), b.tx.step('totp', { code })]);
    const statuses = results.map((r) => r.body.status).sort();
    assert.deepEqual(statuses, ['completed', 'pending']);
    assert.equal((await events(h, realm, 'user.signed_in')).length, signedInBefore + 1);
  });
});

describe('sign-in › recovery codes', () => {
  test('case=a recovery code restricts the account and a later TOTP sign-in restores it/mode=headless', async (t) => {
    const { h, realm, user, clock } = await setup(t);
    const { secret, recoveryCodes } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
    const [recovery = '', other = ''] = recoveryCodes;

    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const wrong = await tx.step('recovery-code', { code: 'aaaaa-aaaaa' });
    assert.equal(wrong.body.status, 'pending');
    assert.equal((await userRow(h, realm, user.id)).state, 'active');

    // Typed in upper case without the hyphen: still the same code.
    const done = await tx.step('recovery-code', { code: recovery.replace('-', '').toUpperCase() });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['pwd', 'recovery']);
    assert.equal((await userRow(h, realm, user.id)).state, 'recovery_restricted');
    const restricted = await events(h, realm, 'user.recovery_restricted');
    assert.equal(restricted.length, 1);
    assert.equal(restricted[0]?.data.user_id, user.id);
    assert.equal(restricted[0]?.data.reason, 'RECOVERY_CODE_USED');
    const used = await audits(h, realm, 'mfa.recovery_code.used');
    assert.equal(used.length, 1);
    assert.equal(used[0]?.subject_id, user.id);
    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.equal(session?.recovery_restricted, true);
    assert.equal(session?.mfa, true, 'a recovery-code session counts as MFA');
    assert.equal(
      await count(h, 'select 1 from recovery_codes where realm_id = $1 and used_at is not null', [realm.id]),
      1,
    );

    // The spent code does not work again.
    const reuse = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const replay = await reuse.tx.step('recovery-code', { code: recovery });
    assert.equal(replay.body.status, 'pending');
    assert.equal((await txRow(h, realm, reuse.tx.id)).failures, 1);

    // A restricted account may still use another recovery code without changing state again.
    const second = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal((await second.tx.step('recovery-code', { code: other })).body.status, 'completed');
    assert.equal((await events(h, realm, 'user.recovery_restricted')).length, 1);

    nextTotpStep(clock);
    const strong = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const restored = await strong.tx.step('totp', { code: totpCode(secret, clock.now()) });
    assert.equal(restored.body.status, 'completed');
    assert.equal((await userRow(h, realm, user.id)).state, 'active');
    const reactivated = await events(h, realm, 'user.reactivated');
    assert.equal(reactivated.length, 1);
    assert.equal(reactivated[0]?.data.reason, 'FACTOR_ASSURANCE_RESTORED');
    assert.equal((await sessionOfTx(h, realm.id, strong.tx.id))?.recovery_restricted, false);
  });
});

describe('sign-in › recovery code races', () => {
  test('case=two transactions racing with one recovery code: exactly one completes/mode=headless', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { h, realm, clock } = await setup(t);
    const { recoveryCodes } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
    const a = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const b = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const code = recoveryCodes[0] ?? '';
    const results = await Promise.all([
      a.tx.step('recovery-code', { code }),
      b.tx.step('recovery-code', { code }),
    ]);
    assert.deepEqual(results.map((r) => r.body.status).sort(), ['completed', 'pending']);
    assert.equal((await audits(h, realm, 'mfa.recovery_code.used')).length, 1);
    assert.equal((await events(h, realm, 'user.recovery_restricted')).length, 1);
  });
});
