// Self-service factors under /me (spec doc 1, "Self-service one-time codes and factors" and
// Authentication 6): TOTP re-enrollment, recovery-code regeneration, HOTP enroll / activate /
// resync / delete and the hotp sign-in step, password change, identifier removal and forgetting
// remembered devices. Every token comes from a real sign-in.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, type TestContext, test } from 'node:test';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { hotp } from '../../../src/mfa/otp.ts';
import { newId } from '../../../src/platform/ids.ts';
import { apiCaller, meCaller } from '../../harness/api-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  codeOf,
  count,
  type MovableClock,
  movableClock,
  nextTotpStep,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  rows,
  signinSetup,
  totpCode,
} from '../../harness/signin-kit.ts';
import { clientSecret, grantResources, oauthPost } from '../../harness/token-kit.ts';

const oathtool = spawnSync('oathtool', ['--version'], { encoding: 'utf8' }).status === 0;

/** The code an HOTP token shows at a counter (oathtool when installed). */
function hotpCode(secret: string, counter: number): string {
  if (oathtool) {
    const r = spawnSync('oathtool', ['--hotp', '-b', secret, '-c', String(counter)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  }
  return hotp(decodeBase32(secret), counter);
}

async function setup(t: TestContext) {
  const clock = movableClock();
  const s = await signinSetup(t, { clock });
  await grantResources(s.h, s.realm, s.client, ['builtin:account']);
  const creds = { clientId: 'web-app', secret: await clientSecret(s.h, s.realm, s.client) };
  const audience = `${s.h.ctx.config.server.publicOrigin}/api/v1/realms/${s.realm.name}/me`;
  let lastDevice = '';
  /**
   * Signs in (answering a second factor with `second` when asked, and remembering the device when
   * that is offered) and returns an account token. With `device` the sign-in presents it.
   */
  const token = async (second?: (types: string[]) => [string, string], device?: string): Promise<string> => {
    const headers: Record<string, string> = device ? { 'x-remembered-device': device } : {};
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { resource: [audience] });
    await tx.step('identify', { identifier: 'alice@example.com' }, headers);
    let done = await tx.step('password', { password: PASSWORD }, headers);
    if (done.body.status === 'pending' && !actionTypes(done.body).includes('remember_device')) {
      assert.ok(second, `a second factor was asked: ${JSON.stringify(done.body)}`);
      const [path, code] = second(actionTypes(done.body));
      done = await tx.step(path, { code });
    }
    if (actionTypes(done.body).includes('remember_device')) {
      done = await tx.step('remember-device', { remember: true });
      lastDevice = done.body.one_time?.remembered_device_token ?? '';
    }
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const res = await oauthPost(
      s.h,
      s.realm,
      'token',
      {
        grant_type: 'authorization_code',
        code: codeOf(done.body.redirect_to),
        redirect_uri: REDIRECT,
        code_verifier: tx.verifier,
        resource: audience,
      },
      creds,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    lastRefresh = res.body.refresh_token;
    return res.body.access_token;
  };
  let lastRefresh = '';
  /** A fresh access token from the last sign-in's refresh token (auth_time stays the sign-in's). */
  const refreshed = async (): Promise<string> => {
    const res = await oauthPost(
      s.h,
      s.realm,
      'token',
      { grant_type: 'refresh_token', refresh_token: lastRefresh, resource: audience },
      creds,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    lastRefresh = res.body.refresh_token;
    return res.body.access_token;
  };
  const me = meCaller(s.h, s.realm);
  return { ...s, clock: clock as MovableClock, token, refreshed, me, device: () => lastDevice };
}

const expect = (res: { status: number; body: { code?: string } }, status: number, code?: string) =>
  assert.deepEqual([res.status, res.body?.code], [status, code], JSON.stringify(res.body));

describe('self-service › factors', () => {
  test('case=the otpauth issuer is the realm brand name (interaction.display_name)', async (t) => {
    const { h, realm, token, me } = await setup(t);
    await h.setPolicy(realm, { interaction: { display_name: 'Acme Shop' } });
    const enrolled = await me(await token(), 'POST', '/totp/enroll', {});
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
    const uri = new URL(enrolled.body.otpauth_uri);
    assert.equal(uri.searchParams.get('issuer'), 'Acme Shop');
    assert.match(decodeURIComponent(uri.pathname), /^\/\/?Acme Shop:/);
  });

  test('case=TOTP enroll and activate, the factor-adding rule, recovery-code regeneration/mode=headless', async (t) => {
    const { h, realm, user, clock, token, me } = await setup(t);
    const plain = await token();
    const enrolled = await me(plain, 'POST', '/totp/enroll', {});
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
    assert.match(enrolled.body.credential_id, /^fen_/);
    assert.match(enrolled.body.otpauth_uri, /^otpauth:\/\/totp\//);
    expect(await me(plain, 'POST', '/totp/activate', { code: '000000' }), 422, 'validation_failed');
    const activated = await me(plain, 'POST', '/totp/activate', {
      code: totpCode(enrolled.body.secret, clock.now()),
    });
    assert.equal(activated.status, 200, JSON.stringify(activated.body));
    assert.equal(activated.body.status, 'totp_enrolled');
    assert.equal(activated.body.recovery_codes.length, 10);

    // The account now has a second factor; this password-only session may not add another.
    const refused = await me(plain, 'POST', '/totp/enroll', {});
    expect(refused, 403, 'step_up_required');
    assert.deepEqual(refused.body.obligation, { type: 'reauthenticate', required_profile: 'mfa' });
    expect(await me(plain, 'POST', '/recovery-codes/regenerate', {}), 403, 'mfa_required');

    nextTotpStep(clock);
    const strong = await token((types) => {
      assert.deepEqual(types, ['totp', 'recovery_code']);
      return ['totp', totpCode(enrolled.body.secret, clock.now())];
    });
    const regenerated = await me(strong, 'POST', '/recovery-codes/regenerate', {});
    assert.equal(regenerated.status, 200, JSON.stringify(regenerated.body));
    assert.equal(regenerated.body.recovery_codes.length, 10);
    assert.notDeepEqual(regenerated.body.recovery_codes, activated.body.recovery_codes);
    // The old codes are gone: one batch of ten remains.
    assert.equal(
      await count(h, 'select 1 from recovery_codes where realm_id = $1 and user_id = $2', [
        realm.id,
        user.id,
      ]),
      10,
    );

    // Replacing the authenticator from the MFA session: the new secret is the one asked next.
    const again = await me(strong, 'POST', '/totp/enroll', {});
    assert.equal(again.status, 201);
    nextTotpStep(clock);
    const replaced = await me(strong, 'POST', '/totp/activate', {
      code: totpCode(again.body.secret, clock.now()),
    });
    assert.equal(replaced.body.status, 'totp_enrolled');
    nextTotpStep(clock);
    await token(() => ['totp', totpCode(again.body.secret, clock.now())]);
  });

  test('case=HOTP: realm switch, enroll, activate, sign-in step, resync and delete/mode=headless', async (t) => {
    const { h, realm, user, clock, token, me } = await setup(t);
    const plain = await token();
    expect(await me(plain, 'POST', '/hotp/enroll', {}), 409, 'conflict');
    await h.setPolicy(realm, { mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] } });
    const enrolled = await me(plain, 'POST', '/hotp/enroll', {});
    assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
    assert.equal(enrolled.body.counter, 0);
    assert.match(enrolled.body.otpauth_uri, /^otpauth:\/\/hotp\/.*counter=0/);
    assert.equal(decodeBase32(enrolled.body.secret).length, 20, '160-bit secret');
    assert.equal(
      new Date(enrolled.body.expires_at).getTime() - clock.now().getTime(),
      15 * 60_000,
      'valid 15 minutes',
    );
    const secret: string = enrolled.body.secret;
    // Outside look_ahead (default 10) of counter 0: refused.
    expect(
      await me(plain, 'POST', '/hotp/activate', { code: hotpCode(secret, 11) }),
      422,
      'validation_failed',
    );
    const activated = await me(plain, 'POST', '/hotp/activate', { code: hotpCode(secret, 3) });
    assert.equal(activated.status, 200, JSON.stringify(activated.body));
    assert.equal(activated.body.status, 'hotp_enrolled');
    assert.equal(activated.body.recovery_codes.length, 10, 'recovery codes once, as the account had none');

    // Sign-in asks for HOTP; counter 4 is next, and a used code is never accepted again.
    const viaHotp = await token((types) => {
      assert.deepEqual(types, ['hotp', 'recovery_code']);
      return ['hotp', hotpCode(secret, 4)];
    });
    assert.ok(viaHotp);
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const replay = await tx.step('hotp', { code: hotpCode(secret, 4) });
    assert.equal(replay.body.status, 'pending');
    assert.equal(
      replay.body.failures ??
        (await rows(h, 'select failures from signin_transactions where id = $1', [tx.id]))[0]?.failures,
      1,
    );

    // Resync needs MFA with another factor: the HOTP session is refused.
    expect(await me(viaHotp, 'POST', '/hotp/resync', { code: '1', next_code: '2' }), 403, 'mfa_required');
    const codes: string[] = activated.body.recovery_codes;
    const viaRecovery = await token(() => ['recovery-code', codes[0] as string]);
    // A recovery-code session is restricted: resync is not among its allowed writes.
    expect(
      await me(viaRecovery, 'POST', '/hotp/resync', { code: '1', next_code: '2' }),
      403,
      'recovery_restricted',
    );

    // An authenticator app gives a session that completed MFA with another factor.
    await h.ctx.db.query("update users set state = 'active' where realm_id = $1 and id = $2", [
      realm.id,
      user.id,
    ]);
    const totp = await me(viaHotp, 'POST', '/totp/enroll', {});
    assert.equal(totp.status, 201, JSON.stringify(totp.body));
    assert.equal(
      (await me(viaHotp, 'POST', '/totp/activate', { code: totpCode(totp.body.secret, clock.now()) })).status,
      200,
    );
    nextTotpStep(clock);
    const viaTotp = await token((types) => {
      assert.deepEqual(types, ['totp', 'hotp', 'recovery_code']);
      return ['totp', totpCode(totp.body.secret, clock.now())];
    });
    // The token drifted to counter 60 (outside look_ahead, inside resync_window 100).
    expect(
      await me(viaTotp, 'POST', '/hotp/resync', {
        code: hotpCode(secret, 60),
        next_code: hotpCode(secret, 62),
      }),
      422,
      'validation_failed',
    );
    const resynced = await me(viaTotp, 'POST', '/hotp/resync', {
      code: hotpCode(secret, 60),
      next_code: hotpCode(secret, 61),
    });
    assert.equal(resynced.status, 200, JSON.stringify(resynced.body));
    assert.equal(resynced.body.counter, 62);
    const [row] = await rows(h, 'select counter from hotp_credentials where realm_id = $1 and user_id = $2', [
      realm.id,
      user.id,
    ]);
    assert.equal(Number(row?.counter), 62);
    // At most 5 attempts per 15 minutes, failures and successes alike (2 so far).
    for (let i = 0; i < 3; i++)
      expect(
        await me(viaTotp, 'POST', '/hotp/resync', { code: '000000', next_code: '000001' }),
        422,
        'validation_failed',
      );
    const limited = await me(viaTotp, 'POST', '/hotp/resync', {
      code: hotpCode(secret, 62),
      next_code: hotpCode(secret, 63),
    });
    expect(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);

    // Delete: refused while it would leave an account that must use MFA without a second factor.
    await h.ctx.db.query('delete from totp_credentials where realm_id = $1 and user_id = $2', [
      realm.id,
      user.id,
    ]);
    await h.setPolicy(realm, {
      mfa: { requirement: 'required', allowed_factors: ['totp', 'hotp', 'recovery_code'] },
    });
    expect(await me(viaTotp, 'DELETE', '/hotp'), 409, 'last_sign_in_method');
    await h.setPolicy(realm, {
      mfa: { requirement: 'optional', allowed_factors: ['totp', 'hotp', 'recovery_code'] },
    });
    assert.equal((await me(viaTotp, 'DELETE', '/hotp')).status, 204);
    assert.equal(await count(h, 'select 1 from hotp_credentials where realm_id = $1', [realm.id]), 0);
    expect(await me(viaTotp, 'DELETE', '/hotp'), 404, 'not_found');
  });

  test('case=removing HOTP needs a session that completed MFA; a remembered device is none/mode=headless', async (t) => {
    const { h, realm, user, token, me, device } = await setup(t);
    await h.setPolicy(realm, {
      mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] },
      login: { remember_devices: true },
    });
    // The first second factor may come from a password session (nothing to protect yet).
    const plain = await token();
    const enrolled = await me(plain, 'POST', '/hotp/enroll', {});
    const secret: string = enrolled.body.secret;
    assert.equal((await me(plain, 'POST', '/hotp/activate', { code: hotpCode(secret, 0) })).status, 200);
    const viaHotp = await token(() => ['hotp', hotpCode(secret, 1)]);
    assert.ok(device(), 'the HOTP sign-in remembered the device');
    // A password and the remembered device: signed in without the second factor.
    const remembered = await token(undefined, device());
    for (const [who, tok] of [
      ['a password and a remembered device', remembered],
      ['the password session that enrolled it', plain],
    ] as const) {
      const refused = await me(tok, 'DELETE', '/hotp');
      expect(refused, 403, 'step_up_required');
      assert.equal(refused.body.obligation?.required_profile, 'mfa', who);
    }
    const hotpRows = () =>
      count(h, 'select 1 from hotp_credentials where realm_id = $1 and user_id = $2', [realm.id, user.id]);
    assert.equal(await hotpRows(), 1, 'the only second factor is still there');
    assert.equal((await me(viaHotp, 'DELETE', '/hotp')).status, 204);
    assert.equal(await hotpRows(), 0);
  });

  test('case=a recovery-code session replaces the HOTP token and the account is active again/mode=headless', async (t) => {
    const { h, realm, user, token, me } = await setup(t);
    await h.setPolicy(realm, { mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] } });
    const plain = await token();
    const first = await me(plain, 'POST', '/hotp/enroll', {});
    const activated = await me(plain, 'POST', '/hotp/activate', { code: hotpCode(first.body.secret, 0) });
    const codes: string[] = activated.body.recovery_codes;
    const restricted = await token(() => ['recovery-code', codes[0] as string]);
    const state = async () =>
      (await rows(h, 'select state from users where realm_id = $1 and id = $2', [realm.id, user.id]))[0]
        ?.state;
    assert.equal(await state(), 'recovery_restricted');
    // Enrollment and activation are among a restricted session's allowed writes, and a
    // recovery-code session counts as MFA for the factor-adding rule.
    const again = await me(restricted, 'POST', '/hotp/enroll', {});
    assert.equal(again.status, 201, JSON.stringify(again.body));
    const replaced = await me(restricted, 'POST', '/hotp/activate', { code: hotpCode(again.body.secret, 1) });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.recovery_codes, undefined, 'the account still had recovery codes');
    assert.equal(await state(), 'active');
    assert.equal(
      await count(h, 'select 1 from hotp_credentials where realm_id = $1 and user_id = $2', [
        realm.id,
        user.id,
      ]),
      1,
    );
    const [row] = await rows(
      h,
      'select id, counter from hotp_credentials where realm_id = $1 and user_id = $2',
      [realm.id, user.id],
    );
    assert.equal(row?.id, again.body.credential_id);
    assert.equal(Number(row?.counter), 2);
  });

  test('case=password change: recent auth, current password, history, other sessions end/mode=headless', async (t) => {
    const { h, realm, clock, token, refreshed, me } = await setup(t);
    await h.setPolicy(realm, { password: { history_count: 2, revoke_sessions_on_change: true } });
    const other = await token();
    const current = await token();
    expect(
      await me(current, 'POST', '/password', {
        current_password: 'wrong-password',
        new_password: 'a-new-secret-1',
      }),
      422,
      'validation_failed',
    );
    expect(
      await me(current, 'POST', '/password', { current_password: PASSWORD, new_password: PASSWORD }),
      422,
      'validation_failed',
    );
    const changed = await me(current, 'POST', '/password', {
      current_password: PASSWORD,
      new_password: 'a-new-secret-1',
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(changed.body.sessions_revoked, 1);
    assert.equal((await me(other, 'GET', '/sessions')).status, 401, 'the other session ended');
    assert.equal((await me(current, 'GET', '/sessions')).status, 200, 'the caller stays signed in');
    // history_count 2: the password before the current one may not come back either.
    expect(
      await me(current, 'POST', '/password', { current_password: 'a-new-secret-1', new_password: PASSWORD }),
      422,
      'validation_failed',
    );
    const { state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', 'a-new-secret-1');
    assert.equal(state.body.status, 'completed');
    clock.advance(11 * 60_000);
    const stale = await me(await refreshed(), 'POST', '/password', {
      current_password: 'a-new-secret-1',
      new_password: 'a-new-secret-2',
    });
    expect(stale, 403, 'step_up_required');
    assert.equal(stale.body.obligation.required_profile, 'recent');
  });

  test('case=password change without a kept history still refuses the current password/mode=headless', async (t) => {
    const { token, me } = await setup(t);
    const current = await token();
    const same = await me(current, 'POST', '/password', {
      current_password: PASSWORD,
      new_password: PASSWORD,
    });
    expect(same, 422, 'validation_failed');
    assert.deepEqual(same.body.errors, [{ field: 'new_password', code: 'password_reused' }]);
    // Below password.min_strength (default 2): a common password is refused with too_weak.
    const weak = await me(current, 'POST', '/password', {
      current_password: PASSWORD,
      new_password: 'password123',
    });
    expect(weak, 422, 'validation_failed');
    assert.deepEqual(weak.body.errors, [{ field: 'new_password', code: 'too_weak' }]);
    const changed = await me(current, 'POST', '/password', {
      current_password: PASSWORD,
      new_password: 'a-new-secret-1',
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    // Nothing kept: the password before the current one may come back.
    const back = await me(current, 'POST', '/password', {
      current_password: 'a-new-secret-1',
      new_password: PASSWORD,
    });
    assert.equal(back.status, 200, JSON.stringify(back.body));
  });

  test('case=identifier removal and forgetting remembered devices/mode=headless', async (t) => {
    const { h, realm, user, token, me } = await setup(t);
    await h.ctx.db.query(
      `insert into user_identifiers (realm_id, id, user_id, type, value, value_key, verified, is_primary)
       values ($1, $2, $3, 'username', 'alice', 'alice', true, true)`,
      [realm.id, newId('idf'), user.id],
    );
    const tok = await token();
    const ids = await rows(
      h,
      'select id, type from user_identifiers where realm_id = $1 and user_id = $2 order by type',
      [realm.id, user.id],
    );
    const email = ids.find((i) => i.type === 'email');
    const username = ids.find((i) => i.type === 'username');
    expect(await me(tok, 'DELETE', `/identifiers/${newId('idf')}`), 404, 'not_found');
    assert.equal((await me(tok, 'DELETE', `/identifiers/${email?.id}`)).status, 204);
    expect(await me(tok, 'DELETE', `/identifiers/${username?.id}`), 409, 'last_sign_in_method');

    assert.equal((await me(tok, 'DELETE', '/remembered-devices')).status, 204);
    expect(await me(tok, 'DELETE', `/remembered-devices/${newId('rdv')}`), 404, 'not_found');
  });
});

describe('self-service › factors the realm allows (mfa.allowed_factors, mfa.hotp)', () => {
  /** The realm policy changed through PUT /settings by a realm administrator. */
  const settingsOf = async (s: Awaited<ReturnType<typeof setup>>) => {
    const admin = await apiCaller(s.h, s.realm);
    return async (policy: Record<string, unknown>) => {
      const res = await admin.call('PUT', '/settings', { policy });
      assert.equal(res.status, 200, await res.text());
    };
  };

  test('case=a factor left out is not enrolled, offered or accepted; listed again it counts/mode=headless', async (t) => {
    const s = await setup(t);
    const { h, realm, user, clock, token, me } = s;
    const put = await settingsOf(s);
    const plain = await token();
    const enrolled = await me(plain, 'POST', '/totp/enroll', {});
    const activated = await me(plain, 'POST', '/totp/activate', {
      code: totpCode(enrolled.body.secret, clock.now()),
    });
    const codes: string[] = activated.body.recovery_codes;
    assert.equal(codes.length, 10);

    // TOTP left out: the enrolled authenticator is neither asked for nor makes MFA required.
    await put({ mfa: { allowed_factors: ['webauthn', 'recovery_code'] } });
    const withoutTotp = await token();
    expect(await me(withoutTotp, 'POST', '/totp/enroll', {}), 409, 'conflict');
    const signin = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(signin.state.body.status, 'completed', JSON.stringify(signin.state.body));
    const stored = 'select 1 from totp_credentials where realm_id = $1 and user_id = $2';
    assert.equal(await count(h, stored, [realm.id, user.id]), 1, 'the authenticator stays stored');

    // TOTP back, recovery codes out: only the authenticator is offered and codes are refused.
    await put({ mfa: { allowed_factors: ['totp'] } });
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(state.body), ['totp']);
    expect(await tx.step('recovery-code', { code: codes[0] }), 409, 'conflict');
    nextTotpStep(clock);
    const strong = await token((types) => {
      assert.deepEqual(types, ['totp']);
      return ['totp', totpCode(enrolled.body.secret, clock.now())];
    });
    expect(await me(strong, 'POST', '/recovery-codes/regenerate', {}), 409, 'conflict');
    // A new authenticator comes without recovery codes while they are left out.
    const again = await me(strong, 'POST', '/totp/enroll', {});
    assert.equal(again.status, 201, JSON.stringify(again.body));
    nextTotpStep(clock);
    const replaced = await me(strong, 'POST', '/totp/activate', {
      code: totpCode(again.body.secret, clock.now()),
    });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.body.recovery_codes, undefined);
    // Passkeys left out as a factor and as a sign-in method: registration is refused.
    expect(await me(strong, 'POST', '/webauthn/registration-options', {}), 409, 'conflict');

    // Listed again, the stored recovery codes count once more.
    await put({ mfa: { allowed_factors: ['totp', 'recovery_code'] } });
    const back = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(back.state.body), ['totp', 'recovery_code']);
  });

  test('case=a token the realm no longer allows can be removed without its MFA/mode=headless', async (t) => {
    const s = await setup(t);
    const { token, me } = s;
    const put = await settingsOf(s);
    await put({ mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] } });
    const plain = await token();
    const enrolled = await me(plain, 'POST', '/hotp/enroll', {});
    await me(plain, 'POST', '/hotp/activate', { code: hotpCode(enrolled.body.secret, 0) });
    expect(await me(plain, 'DELETE', '/hotp'), 403, 'step_up_required');
    await put({ mfa: { allowed_factors: ['totp', 'recovery_code'] } });
    // The sign-in no longer asks for the token, and the password-only session may remove it.
    assert.equal((await me(await token(), 'DELETE', '/hotp')).status, 204);
  });

  test('case=required MFA with TOTP left out offers only what the realm allows/mode=headless', async (t) => {
    const s = await setup(t);
    const put = await settingsOf(s);
    await put({ mfa: { requirement: 'required', allowed_factors: ['webauthn', 'recovery_code'] } });
    const { state } = await passwordSignIn(s.h, s.realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(state.body), ['enroll_webauthn']);
  });

  test('case=mfa.hotp look_ahead and resync_window bound activation, sign-in and resync/mode=headless', async (t) => {
    const s = await setup(t);
    const { h, realm, clock, token, me } = s;
    const put = await settingsOf(s);
    await put({
      mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'], hotp: { look_ahead: 2, resync_window: 5 } },
    });
    const plain = await token();
    const enrolled = await me(plain, 'POST', '/hotp/enroll', {});
    const secret: string = enrolled.body.secret;
    expect(
      await me(plain, 'POST', '/hotp/activate', { code: hotpCode(secret, 3) }),
      422,
      'validation_failed',
    );
    const activated = await me(plain, 'POST', '/hotp/activate', { code: hotpCode(secret, 2) });
    assert.equal(activated.status, 200, JSON.stringify(activated.body));
    // Next counter 3: a code three ahead (6) is outside look_ahead 2 at sign-in.
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal((await tx.step('hotp', { code: hotpCode(secret, 6) })).body.status, 'pending');
    // Resync needs another factor's MFA: enroll TOTP from an HOTP session.
    const viaHotp = await token(() => ['hotp', hotpCode(secret, 5)]);
    const totp = await me(viaHotp, 'POST', '/totp/enroll', {});
    await me(viaHotp, 'POST', '/totp/activate', { code: totpCode(totp.body.secret, clock.now()) });
    nextTotpStep(clock);
    const viaTotp = await token(() => ['totp', totpCode(totp.body.secret, clock.now())]);
    /** Resync with the codes at counters `from` and `from + 1`. */
    const resyncFrom = (from: number) =>
      me(viaTotp, 'POST', '/hotp/resync', {
        code: hotpCode(secret, from),
        next_code: hotpCode(secret, from + 1),
      });
    // Stored counter 6: resync_window 5 reaches counter 11, not 12.
    expect(await resyncFrom(12), 422, 'validation_failed');
    const resynced = await resyncFrom(11);
    assert.deepEqual([resynced.status, resynced.body.counter], [200, 13], JSON.stringify(resynced.body));
  });
});
