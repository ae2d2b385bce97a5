// Each condition that makes MFA required at sign-in (spec doc 1, the MFA conditions of the
// evaluation order): realm policy, client, acr_values, admin audience, privileged role, protected
// account; and the phishing-resistant profile, which TOTP never satisfies.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { assignRealmRole, findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { BUILTIN_ROLES } from '../../../src/roles/permissions.ts';
import { bootstrapAdministrator } from '../../../src/setup/bootstrap.service.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import {
  actionTypes,
  assertNothingIssued,
  enrollTotp,
  movableClock,
  nextTotpStep,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  sessionOfTx,
  signinSetup,
  totpCode,
  userRow,
} from '../../harness/signin-kit.ts';
import { grantResources } from '../../harness/token-kit.ts';

const setup = (t: TestContext) => signinSetup(t, { clock: movableClock() });

describe('sign-in › when MFA is required', () => {
  async function expectEnrollment(
    h: Harness,
    realmName: string,
    extra: Record<string, unknown> = {},
    expected = ['enroll_totp', 'enroll_webauthn'],
  ) {
    const { state } = await passwordSignIn(h, realmName, 'web-app', 'alice@example.com', PASSWORD, extra);
    assert.equal(state.body.status, 'pending', JSON.stringify(state.body));
    assert.deepEqual(actionTypes(state.body), expected);
  }

  test('case=realm policy mfa.requirement required/mode=headless', async (t) => {
    const { h, realm, clock } = await setup(t);
    await h.setPolicy(realm, {
      mfa: { requirement: 'required', allowed_factors: ['totp', 'recovery_code'] },
    });
    await expectEnrollment(h, realm.name, {}, ['enroll_totp']);
    await assertNothingIssued(h, realm);
    // With an authenticator, the realm rule asks for it at every sign-in.
    const { secret } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
    nextTotpStep(clock);
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(state.body), ['totp', 'recovery_code']);
    assert.equal((await tx.step('totp', { code: totpCode(secret, clock.now()) })).body.status, 'completed');
  });

  test('case=client requireMfa/mode=headless', async (t) => {
    const { h, realm } = await setup(t);
    await h.createClient(realm, {
      clientId: 'strict-app',
      name: 'Strict App',
      type: 'web',
      redirectUris: [REDIRECT],
      requireMfa: true,
    });
    const plain = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(plain.state.body.status, 'completed', 'other clients are unaffected');
    const { state } = await passwordSignIn(h, realm.name, 'strict-app', 'alice@example.com');
    assert.deepEqual(actionTypes(state.body), ['enroll_totp', 'enroll_webauthn']);
  });

  test('case=acr_values mfa/mode=headless', async (t) => {
    const { h, realm } = await setup(t);
    await expectEnrollment(h, realm.name, { acr_values: 'mfa' });
    await assertNothingIssued(h, realm);
    await expectEnrollment(h, realm.name, { acr_values: 'urn:example:loa:1 mfa' });
  });

  test('case=acr_values phishing_resistant never falls back to TOTP/mode=headless', async (t) => {
    const { h, realm, clock } = await setup(t);
    const { state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      acr_values: 'phishing_resistant',
    });
    // No second factor yet: a user-verified passkey may be enrolled (test/integration/signin/passkeys.test.ts).
    assert.equal(state.body.status, 'pending');
    assert.deepEqual(actionTypes(state.body), ['enroll_webauthn']);
    assert.equal(state.body.next_actions[0].options.user_verification, 'required');
    await assertNothingIssued(h, realm);
    await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
    const withTotp = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      acr_values: 'phishing_resistant mfa',
    });
    assert.equal(withTotp.state.body.error, 'login_method_not_allowed');
    assert.deepEqual(withTotp.state.body.next_actions, []);
    assert.equal((await withTotp.tx.step('totp', { code: '123456' })).status, 409);
  });

  test('case=admin audience resource/mode=headless', async (t) => {
    const { h, realm, client } = await setup(t);
    const admin = `${h.ctx.config.server.publicOrigin}/api/v1/realms/${realm.name}`;
    await grantResources(h, realm, client, ['builtin:admin', 'builtin:account']);
    await expectEnrollment(h, realm.name, { resource: [admin] });
    await expectEnrollment(h, realm.name, { resource: ['builtin:admin'] });
    const other = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      resource: [`${admin}/me`],
    });
    assert.equal(other.state.body.status, 'completed', 'the account audience is not the admin audience');
  });

  test('case=privileged realm role assigned to an account/mode=headless', async (t) => {
    const { h, realm, user } = await setup(t);
    await h.ctx.db.tx(async (q) => {
      const role = await findRoleByName(q, realm.id, BUILTIN_ROLES.realmAdmin.name);
      assert.ok(role);
      await assignRealmRole(
        q,
        { realmId: realm.id, roleId: role.id, subjectType: 'user', subjectId: user.id, source: 'test' },
        h.ctx.clock.now(),
      );
    });
    await expectEnrollment(h, realm.name);
  });

  test('case=protected account/mode=headless', async (t) => {
    const { h, realm, user } = await setup(t);
    await h.ctx.db.query('update users set protected = true where realm_id = $1 and id = $2', [
      realm.id,
      user.id,
    ]);
    await expectEnrollment(h, realm.name);
  });

  test('case=bootstrap administrator enrolls TOTP and signs in with MFA/mode=headless', async (t) => {
    const clock = movableClock();
    const h = await startHarness(t, { clock });
    const keyring = h.ctx.keyring;
    assert.ok(keyring);
    const result = await bootstrapAdministrator(
      {
        db: h.ctx.db,
        keyring,
        hasher: h.ctx.hasher,
        signingAlgorithm: h.ctx.config.keys.signingAlgorithm,
        clock,
      },
      { realm: `adm${Date.now().toString(36)}`, email: 'root@example.com', password: 'a-long-admin-secret' },
    );
    const realm = result.realm;
    await h.createClient(realm, {
      clientId: 'web-app',
      name: 'Web App',
      type: 'web',
      redirectUris: [REDIRECT],
    });

    const first = await passwordSignIn(h, realm.name, 'web-app', 'root@example.com', 'a-long-admin-secret');
    assert.deepEqual(actionTypes(first.state.body), ['enroll_totp']);
    const enrolled = await first.tx.step('totp/enroll', {});
    const secret: string = enrolled.body.one_time.totp.secret;
    const activated = await first.tx.step('totp/activate', { code: totpCode(secret, clock.now()) });
    assert.equal(activated.body.status, 'completed');
    assert.deepEqual((await userRow(h, realm, result.userId)).required_actions, []);

    nextTotpStep(clock);
    const second = await passwordSignIn(h, realm.name, 'web-app', 'root@example.com', 'a-long-admin-secret');
    assert.deepEqual(actionTypes(second.state.body), ['totp', 'recovery_code']);
    assert.equal(
      (await second.tx.step('totp', { code: totpCode(secret, clock.now()) })).body.status,
      'completed',
    );
    assert.equal((await sessionOfTx(h, realm.id, second.tx.id))?.mfa, true);
  });
});
