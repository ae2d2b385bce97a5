// Self-service passkeys under /me (spec doc 1, self-service factor table; Authentication 6;
// Errors 409 last_sign_in_method): registration, list, rename, remove, with tokens from real
// sign-ins and the software authenticator.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { meCaller } from '../../harness/api-kit.ts';
import { answerWithPasskey } from '../../harness/passkey-kit.ts';
import {
  audits,
  codeOf,
  movableClock,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  signinSetup,
} from '../../harness/signin-kit.ts';
import { SoftAuthenticator } from '../../harness/soft-authenticator.ts';
import { clientSecret, exchangeCode, grantResources } from '../../harness/token-kit.ts';

async function setup(t: TestContext) {
  const s = await signinSetup(t, { clock: movableClock() });
  await grantResources(s.h, s.realm, s.client, ['builtin:account']);
  const creds = { clientId: 'web-app', secret: await clientSecret(s.h, s.realm, s.client) };
  const audience = `${s.h.ctx.config.server.publicOrigin}/api/v1/realms/${s.realm.name}/me`;
  const authenticator = new SoftAuthenticator(s.h.ctx.config.server.publicOrigin);
  /** Password sign-in; a passkey answers MFA when it is asked for. */
  const token = async (extra: Record<string, unknown> = {}): Promise<string> => {
    const { tx, state } = await passwordSignIn(s.h, s.realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      resource: [audience],
      ...extra,
    });
    const done =
      state.body.status === 'pending' ? (await answerWithPasskey(tx, authenticator)).verified : state;
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const res = await exchangeCode(s.h, s.realm, creds, done.body.redirect_to, tx.verifier, {
      resource: audience,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.access_token;
  };
  const me = meCaller(s.h, s.realm);
  const register = async (tok: string, name?: string) => {
    const options = await me(tok, 'POST', '/webauthn/registration-options', {});
    if (options.status !== 200) return options;
    const credential = await authenticator.create(options.body);
    return me(tok, 'POST', '/webauthn/registration-complete', { credential, ...(name ? { name } : {}) });
  };
  return { ...s, token, me, register, authenticator };
}

describe('self-service › passkeys', () => {
  test('case=register, list, rename; the factor-adding rule for the next one/mode=headless', async (t) => {
    const { h, realm, clock, token, me, register } = await setup(t);
    const plain = await token();
    const first = await register(plain, 'Laptop');
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.match(first.body.id, /^pkc_/);
    assert.equal(first.body.name, 'Laptop');
    assert.equal(first.body.recovery_codes.length, 10, 'the account had no recovery codes');
    assert.equal((await audits(h, realm, 'mfa.webauthn.enrolled')).length, 1);

    const again = await me(plain, 'POST', '/webauthn/registration-options', {});
    assert.deepEqual(
      [again.status, again.body.code],
      [403, 'step_up_required'],
      'a second passkey needs MFA',
    );

    // A passkey does not make MFA required by itself: the client asks for it.
    const strong = await token({ acr_values: 'mfa' });
    clock.advance(1000);
    const second = await register(strong, 'Phone');
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.equal(second.body.recovery_codes, undefined);
    const list = await me(strong, 'GET', '/webauthn/credentials');
    assert.deepEqual(
      list.body.items.map((p: { name: string }) => p.name),
      ['Laptop', 'Phone'],
    );
    const renamed = await me(strong, 'PATCH', `/webauthn/credentials/${first.body.id}`, {
      name: 'Work laptop',
    });
    assert.equal(renamed.body.name, 'Work laptop');
    assert.equal(
      (await me(strong, 'PATCH', '/webauthn/credentials/pkc_00000000000000000000000000', { name: 'x' }))
        .status,
      404,
    );
  });

  test('case=removing the last passkey of an account that must use MFA is 409 last_sign_in_method/mode=headless', async (t) => {
    const { h, realm, token, me, register } = await setup(t);
    const created = await register(await token());
    await h.setPolicy(realm, { mfa: { requirement: 'required' } });
    const tok = await token();
    const refused = await me(tok, 'DELETE', `/webauthn/credentials/${created.body.id}`);
    assert.deepEqual([refused.status, refused.body.code], [409, 'last_sign_in_method']);
    await h.setPolicy(realm, { mfa: { requirement: 'optional' } });
    assert.equal((await me(tok, 'DELETE', `/webauthn/credentials/${created.body.id}`)).status, 204);
    assert.equal((await audits(h, realm, 'mfa.webauthn.removed')).length, 1);
  });

  test('case=removing the only way a passwordless account signs in is 409 last_sign_in_method/mode=headless', async (t) => {
    const { h, realm, user, token, me, register } = await setup(t);
    const created = await register(await token());
    const tok = await token({ acr_values: 'mfa' });
    await h.ctx.db.query('delete from password_credentials where realm_id = $1 and user_id = $2', [
      realm.id,
      user.id,
    ]);
    const refused = await me(tok, 'DELETE', `/webauthn/credentials/${created.body.id}`);
    assert.deepEqual([refused.status, refused.body.code], [409, 'last_sign_in_method']);
  });

  test('case=removing a passkey or changing the password needs a session that completed MFA/mode=headless', async (t) => {
    const { h, realm, token, me, register } = await setup(t);
    // A passkey does not make MFA required at sign-in: a password alone gives a session without it.
    const plain = await token();
    const created = await register(plain);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const removal = await me(plain, 'DELETE', `/webauthn/credentials/${created.body.id}`);
    assert.deepEqual([removal.status, removal.body.code], [403, 'step_up_required']);
    assert.equal(removal.body.obligation?.required_profile, 'mfa');
    const change = { current_password: PASSWORD, new_password: 'a-new-secret-1' };
    const password = await me(plain, 'POST', '/password', change);
    assert.deepEqual([password.status, password.body.code], [403, 'mfa_required']);
    assert.equal((await me(plain, 'GET', '/webauthn/credentials')).body.items.length, 1);

    const strong = await token({ acr_values: 'mfa' });
    assert.equal((await me(strong, 'POST', '/password', change)).status, 200);
    assert.equal((await me(strong, 'DELETE', `/webauthn/credentials/${created.body.id}`)).status, 204);
    assert.equal((await audits(h, realm, 'mfa.webauthn.removed')).length, 1);
  });

  test('case=a refused registration is 422 and audited/mode=headless', async (t) => {
    const { h, realm, token, me, authenticator } = await setup(t);
    await h.setPolicy(realm, { webauthn: { allowed_aaguids: ['11111111-2222-3333-4444-555555555555'] } });
    const tok = await token();
    const options = await me(tok, 'POST', '/webauthn/registration-options', {});
    const credential = await authenticator.create(options.body);
    const refused = await me(tok, 'POST', '/webauthn/registration-complete', { credential });
    assert.equal(refused.status, 422);
    assert.equal(refused.body.errors[0].code, 'authenticator_not_allowed');
    assert.equal((await audits(h, realm, 'mfa.webauthn.enrollment_failed')).length, 1);
  });
});
