// Passkeys in sign-in transactions (spec doc 1, webauthn steps, Passkey policy, case rule 2, the
// phishing-resistant profile), driven by the software authenticator (test/harness).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import {
  answerWithPasskey,
  enrollInTransaction,
  passkeySetup,
  startSignIn,
} from '../../harness/passkey-kit.ts';
import { actionTypes, audits, passwordSignIn, rows, sessionOfTx, txRow } from '../../harness/signin-kit.ts';
import { ZERO_AAGUID } from '../../harness/soft-authenticator.ts';

const MODEL = '11111111-2222-3333-4444-555555555555';
const OTHER = '99999999-2222-3333-4444-555555555555';

describe('sign-in › passkeys', () => {
  test('case=required MFA enrolls a passkey in the transaction and records it/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    const { options, registered } = await enrollInTransaction(h, realm, authenticator, { aaguid: MODEL });
    const o = options.body.webauthn;
    assert.equal(o.rp.id, 'localhost');
    assert.equal(o.authenticatorSelection.residentKey, 'required');
    assert.equal(o.authenticatorSelection.userVerification, 'preferred');
    assert.deepEqual(Object.keys(o.extensions).sort(), ['credProps']);
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    assert.equal(registered.body.status, 'completed');
    assert.deepEqual(registered.body.completed_factors, ['pwd', 'hwk']);
    assert.equal(registered.body.one_time.recovery_codes.length, 10);
    const [row] = await rows(h, 'select * from webauthn_credentials where realm_id = $1', [realm.id]);
    assert.equal(row?.aaguid, MODEL);
    assert.equal(row?.name, 'Test key');
    assert.equal(row?.user_verified, true);
    assert.equal(row?.backup_eligible, false);
    assert.equal(row?.attestation_trusted, false);
    assert.equal(row?.attestation_source, null);
    assert.deepEqual(row?.transports, ['usb']);
    assert.equal((await audits(h, realm, 'mfa.webauthn.enrolled')).length, 1);
  });

  test('case=a registered passkey is the second factor and its options list it/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    await enrollInTransaction(h, realm, authenticator);
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(state.body), ['webauthn', 'recovery_code']);
    const { options, verified } = await answerWithPasskey(tx, authenticator);
    assert.equal(options.body.webauthn.allowCredentials.length, 1);
    assert.equal(verified.body.status, 'completed', JSON.stringify(verified.body));
    assert.deepEqual(verified.body.completed_factors, ['pwd', 'hwk']);
    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.equal(session?.mfa, true);
    assert.equal(session?.acr, 'phishing_resistant');
    const [row] = await rows(
      h,
      'select sign_count, last_used_at from webauthn_credentials where realm_id = $1',
      [realm.id],
    );
    assert.equal(Number(row?.sign_count), 1);
    assert.ok(row?.last_used_at);
  });

  test('case=passwordless sign-in with a discoverable passkey names the account/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, {}, { login: { passkeys: true } });
    await enrollInTransaction(h, realm, authenticator);
    const tx = await startSignIn(h, realm);
    const first = await tx.step('webauthn/options', {});
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(
      first.body.webauthn.allowCredentials,
      undefined,
      'discoverable: no list that names the account',
    );
    const credential = await authenticator.get(first.body.webauthn);
    const done = await tx.step('webauthn/verify', { credential });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['hwk']);
  });

  test('case=login.passkeys decides whether a passkey alone is offered to sign in/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    await enrollInTransaction(h, realm, authenticator);
    const off = await startSignIn(h, realm);
    assert.deepEqual(actionTypes(off.start.body.state), ['identify', 'password']);
    assert.equal(
      (await off.step('webauthn/options', {})).status,
      409,
      'not offered before an account is named',
    );
    const admin = await apiCaller(h, realm);
    const put = await admin.call('PUT', '/settings', { policy: { login: { passkeys: true } } });
    assert.equal(put.status, 200, await put.text());
    const on = await startSignIn(h, realm);
    assert.deepEqual(actionTypes(on.start.body.state), ['identify', 'password', 'webauthn']);
  });

  test('case=a user handle naming another account fails the proof, identified or discoverable/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, {}, { login: { passkeys: true } });
    await enrollInTransaction(h, realm, authenticator);
    const bob = await h.createUser(realm, { email: 'bob@example.com', password: 'bobs-own-password' });
    const bobsHandle = Buffer.from(bob.id, 'utf8').toString('base64url');
    const answers = [
      // WebAuthn L3 section 7.2 step 6: a handle that is not the credential owner's...
      { flow: 'discoverable', second: false, userHandle: bobsHandle },
      { flow: 'after the password', second: true, userHandle: bobsHandle },
      // ...and no handle at all where the assertion is what names the account.
      { flow: 'discoverable without a handle', second: false, userHandle: null },
    ];
    for (const [i, a] of answers.entries()) {
      const tx = a.second
        ? (await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com')).tx
        : await startSignIn(h, realm);
      const { verified } = await answerWithPasskey(tx, authenticator, { userHandle: a.userHandle });
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
      assert.equal(verified.body.status, 'pending', `${a.flow}: ${JSON.stringify(verified.body)}`);
      assert.ok(!verified.body.completed_factors.includes('hwk'), a.flow);
      assert.equal((await txRow(h, realm, tx.id)).failures, 1, a.flow);
      const failed = await audits(h, realm, 'mfa.webauthn.failed');
      assert.equal(failed.length, i + 1, a.flow);
      assert.equal(failed.at(-1)?.data?.reason, 'user_handle_mismatch', a.flow);
    }
    // Without a handle after the account was identified, the passkey still works.
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const { verified } = await answerWithPasskey(tx, authenticator, { userHandle: null });
    assert.equal(verified.body.status, 'completed', JSON.stringify(verified.body));
  });

  test('case=a passkey without user verification is possession only (swk)/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, {}, { login: { passkeys: true } });
    await enrollInTransaction(h, realm, authenticator);
    const tx = await startSignIn(h, realm);
    const { verified } = await answerWithPasskey(tx, authenticator, { userVerified: false });
    assert.equal(verified.body.status, 'pending');
    assert.deepEqual(verified.body.completed_factors, ['swk']);
    assert.ok(actionTypes(verified.body).includes('webauthn'), 'MFA still required');
  });

  test('case=a signature counter that does not move forward is a proof failure/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    await enrollInTransaction(h, realm, authenticator);
    const first = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    await answerWithPasskey(first.tx, authenticator, { counter: 5 });
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const { verified } = await answerWithPasskey(tx, authenticator, { counter: 5 });
    assert.equal(verified.body.status, 'pending');
    assert.equal((await txRow(h, realm, tx.id)).failures, 1);
    assert.equal((await audits(h, realm, 'mfa.webauthn.failed')).length, 1);
  });

  test('case=a challenge is answered once/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    await enrollInTransaction(h, realm, authenticator);
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const options = await tx.step('webauthn/options', {});
    const bad = await authenticator.get(options.body.webauthn, { origin: 'https://evil.example' });
    const refused = await tx.step('webauthn/verify', { credential: bad });
    assert.equal(refused.body.status, 'pending');
    assert.equal((await txRow(h, realm, tx.id)).failures, 1);
    const good = await authenticator.get(options.body.webauthn);
    const again = await tx.step('webauthn/verify', { credential: good });
    assert.equal(again.status, 409, 'the challenge was consumed');
  });

  test('case=blocked AAGUID: 422 at registration and a proof failure at sign-in/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, { blocked_aaguids: [OTHER] });
    const refused = await enrollInTransaction(h, realm, authenticator, { aaguid: OTHER });
    assert.equal(refused.registered.status, 422);
    assert.deepEqual(refused.registered.body.errors?.[0]?.field, 'credential');
    assert.equal(refused.registered.body.errors?.[0]?.code, 'authenticator_not_allowed');
    assert.equal((await audits(h, realm, 'mfa.webauthn.enrollment_failed')).length, 1);
    assert.equal(
      await rows(h, 'select 1 from webauthn_credentials where realm_id = $1', [realm.id]).then(
        (r) => r.length,
      ),
      0,
    );

    await enrollInTransaction(h, realm, authenticator, { aaguid: MODEL });
    await h.setPolicy(realm, { webauthn: { blocked_aaguids: [MODEL] } });
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    // The options list the stored passkey only, so the authenticator answers with it.
    const { verified } = await answerWithPasskey(tx, authenticator);
    assert.equal(verified.body.status, 'pending');
    assert.equal((await txRow(h, realm, tx.id)).failures, 1);
    const failed = await audits(h, realm, 'mfa.webauthn.failed');
    assert.equal(failed.at(-1)?.data?.reason, 'authenticator_not_allowed');
  });

  test('case=an allow list refuses other models and the zero AAGUID unless listed/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, { allowed_aaguids: [MODEL] });
    const other = await enrollInTransaction(h, realm, authenticator, { aaguid: OTHER });
    assert.equal(other.registered.body.errors?.[0]?.code, 'authenticator_not_allowed');
    const zero = await enrollInTransaction(h, realm, authenticator, { aaguid: ZERO_AAGUID });
    assert.equal(zero.registered.body.errors?.[0]?.code, 'authenticator_not_allowed');
    await h.setPolicy(realm, { webauthn: { allowed_aaguids: [MODEL, ZERO_AAGUID] } });
    const listed = await enrollInTransaction(h, realm, authenticator, { aaguid: ZERO_AAGUID });
    assert.equal(listed.registered.body.status, 'completed', JSON.stringify(listed.registered.body));
  });

  test('case=user_verification required refuses a registration without it/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, { user_verification: 'required' });
    const r = await enrollInTransaction(h, realm, authenticator, { userVerified: false });
    assert.equal(r.options.body.webauthn.authenticatorSelection.userVerification, 'required');
    assert.equal(r.registered.status, 422);
    assert.equal(r.registered.body.errors?.[0]?.code, 'invalid_credential');
  });

  test('case=allow_synced false refuses a backup-eligible passkey/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, { allow_synced: false });
    const r = await enrollInTransaction(h, realm, authenticator, { backupEligible: true, backupState: true });
    assert.equal(r.registered.body.errors?.[0]?.code, 'authenticator_not_allowed');
  });

  test('case=allow_synced false also refuses a synced passkey at sign-in/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    await enrollInTransaction(h, realm, authenticator, { backupEligible: true, backupState: true });
    await h.setPolicy(realm, { webauthn: { allow_synced: false } });
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const { verified } = await answerWithPasskey(tx, authenticator);
    assert.equal(verified.body.status, 'pending');
    assert.equal((await txRow(h, realm, tx.id)).failures, 1);
    assert.equal(
      (await audits(h, realm, 'mfa.webauthn.failed')).at(-1)?.data?.reason,
      'authenticator_not_allowed',
    );
  });

  test('case=credProtect is requested and, when enforced, must be applied/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t, {
      credential_protection: 'userVerificationRequired',
      enforce_credential_protection: true,
    });
    const without = await enrollInTransaction(h, realm, authenticator);
    const ext = without.options.body.webauthn.extensions;
    assert.equal(ext.credentialProtectionPolicy, 'userVerificationRequired');
    assert.equal(ext.enforceCredentialProtectionPolicy, true);
    assert.equal(without.registered.body.errors?.[0]?.code, 'authenticator_not_allowed');
    const applied = await enrollInTransaction(h, realm, authenticator, { extensions: { credProtect: 3 } });
    assert.equal(applied.registered.body.status, 'completed', JSON.stringify(applied.registered.body));
    const [row] = await rows(
      h,
      'select credential_protection from webauthn_credentials where realm_id = $1',
      [realm.id],
    );
    assert.equal(row?.credential_protection, 'userVerificationRequired');
  });

  test('case=an unrequested extension output fails the ceremony/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    const reg = await enrollInTransaction(h, realm, authenticator, { extensions: { credProtect: 1 } });
    assert.equal(reg.registered.body.errors?.[0]?.code, 'invalid_credential');
    const client = await enrollInTransaction(h, realm, authenticator, {
      clientExtensionResults: { prf: { enabled: true } },
    });
    assert.equal(client.registered.body.errors?.[0]?.code, 'invalid_credential');
    await enrollInTransaction(h, realm, authenticator);
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const { verified } = await answerWithPasskey(tx, authenticator, { extensions: { credProtect: 2 } });
    assert.equal(verified.body.status, 'pending');
    assert.equal((await txRow(h, realm, tx.id)).failures, 1);
  });

  test('case=the phishing-resistant profile offers only a user-verified passkey/mode=headless', async (t) => {
    const { h, realm, authenticator } = await passkeySetup(t);
    await enrollInTransaction(h, realm, authenticator);
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', undefined, {
      acr_values: 'phishing_resistant',
    });
    assert.deepEqual(state.body.next_actions, [
      {
        type: 'webauthn',
        required: true,
        fields: ['credential'],
        options: { user_verification: 'required' },
      },
    ]);
    const noUv = await answerWithPasskey(tx, authenticator, { userVerified: false });
    assert.equal(noUv.options.body.webauthn.userVerification, 'required');
    assert.equal(noUv.verified.body.status, 'pending');
    const ok = await answerWithPasskey(tx, authenticator);
    assert.equal(ok.verified.body.status, 'completed', JSON.stringify(ok.verified.body));
  });

  test('case=mfa.admin_phishing_resistant: an administrator with TOTP only cannot sign in/mode=headless', async (t) => {
    const { h, realm, user, authenticator } = await passkeySetup(
      t,
      {},
      { mfa: { admin_phishing_resistant: true } },
    );
    const { assignRoles } = await import('../../harness/api-kit.ts');
    await assignRoles(h, realm, user.id, ['realm-admin']);
    const { state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(
      actionTypes(state.body),
      ['enroll_webauthn'],
      'no second factor yet: a passkey is enrolled',
    );
    const r = await enrollInTransaction(h, realm, authenticator);
    assert.equal(r.options.body.webauthn.authenticatorSelection.userVerification, 'required');
    assert.equal(r.registered.body.status, 'completed');
    await h.ctx.db.query(
      `insert into totp_credentials (realm_id, user_id, secret_sealed, created_at) values ($1, $2, 'x', now())`,
      [realm.id, user.id],
    );
    await h.ctx.db.query('delete from webauthn_credentials where realm_id = $1', [realm.id]);
    const blocked = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(blocked.state.body.error, 'login_method_not_allowed');
    assert.deepEqual(blocked.state.body.next_actions, []);
  });
});
