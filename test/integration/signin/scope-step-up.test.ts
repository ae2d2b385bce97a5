// Step-up at sign-in from the requested scopes and the intent (spec doc 1, "MFA is required
// when"): a scope with step_up_acr or sensitivity privileged makes MFA required, its
// max_auth_age_seconds lowers max_age (an older SSO session is not reused), and intent step_up
// asks for a second factor.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import type { Harness } from '../../harness/harness.ts';
import {
  actionTypes,
  assertNothingIssued,
  authorizeQuery,
  enrollTotp,
  movableClock,
  nextTotpStep,
  PASSWORD,
  parseSetCookies,
  passwordSignIn,
  REDIRECT,
  rows,
  sessionOfTx,
  signinSetup,
  startBrowser,
  totpCode,
} from '../../harness/signin-kit.ts';
import { seedGrant } from '../../harness/token-kit.ts';

const API = 'https://api.example.com/';

async function seedScopedResource(h: Harness, realm: RealmRow, client: ClientRow): Promise<void> {
  const id = `res_${Math.random().toString(36).slice(2, 12)}`;
  const scopes = [
    { name: 'read' },
    { name: 'transfer', stepUpAcr: 'mfa' },
    { name: 'admin', sensitivity: 'privileged' },
    { name: 'recent', maxAuthAgeSeconds: 60 },
  ];
  await h.ctx.db.query(
    `insert into resources (realm_id, id, name, audience, verification_mode, token_format, access_token_ttl_seconds,
       scopes, requires_organization, created_at, updated_at)
     values ($1, $2, 'api', $3, 'offline', 'jwt', 300, $4, false, now(), now())`,
    [realm.id, id, API, JSON.stringify(scopes)],
  );
  await seedGrant(h, realm, client, id, { scopes: scopes.map((s) => s.name) });
}

async function setup(t: TestContext) {
  const s = await signinSetup(t, { clock: movableClock(), loginUi: 'https://login.example.com/signin' });
  await seedScopedResource(s.h, s.realm, s.client);
  return s;
}

describe('sign-in › step-up by scope and intent', () => {
  test('case=a scope with step_up_acr mfa needs a second factor/mode=headless', async (t) => {
    const { h, realm } = await setup(t);
    const plain = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid read',
      resource: [API],
    });
    assert.equal(plain.state.body.status, 'completed', 'a scope without step-up needs only the password');
    const { state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid transfer',
      resource: [API],
    });
    assert.equal(state.body.status, 'pending');
    assert.deepEqual(actionTypes(state.body), ['enroll_totp', 'enroll_webauthn']);
  });

  test('case=a privileged scope needs TOTP and the code carries acr mfa/mode=headless', async (t) => {
    const { h, realm, clock } = await setup(t);
    const before = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid admin',
      resource: [API],
    });
    assert.deepEqual(
      actionTypes(before.state.body),
      ['enroll_totp', 'enroll_webauthn'],
      'no authenticator yet: enroll one',
    );
    const { secret } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
    nextTotpStep(clock);
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid admin',
      resource: [API],
    });
    assert.deepEqual(actionTypes(state.body), ['totp', 'recovery_code']);
    const done = await tx.step('totp', { code: totpCode(secret, clock.now()) });
    assert.equal(done.body.status, 'completed');
    const [code] = await rows(
      h,
      'select acr from authorization_codes where realm_id = $1 and transaction_id = $2',
      [realm.id, tx.id],
    );
    assert.equal(code?.acr, 'mfa');
  });

  test('case=intent step_up at the authorization endpoint asks for a second factor/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT, { extra: { intent: 'step_up' } });
    await tx.step('identify', { identifier: 'alice@example.com' });
    const state = await tx.step('password', { password: PASSWORD });
    assert.deepEqual(actionTypes(state.body), ['enroll_totp', 'enroll_webauthn']);
    await assertNothingIssued(h, realm);
    const plain = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    await plain.step('identify', { identifier: 'alice@example.com' });
    assert.equal((await plain.step('password', { password: PASSWORD })).body.status, 'completed');
  });

  test('case=max_auth_age_seconds lowers max_age: an older session is not reused/mode=browser', async (t) => {
    const { h, realm, clock } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed');
    const sid = parseSetCookies(done.headers).find((c) => c.name === 'pa_sid')?.value;
    assert.ok(sid);
    assert.ok(await sessionOfTx(h, realm.id, tx.id));
    clock.advance(120_000);
    const authorizeWith = async (scope: string) => {
      const { params } = authorizeQuery('web-app', REDIRECT, { scope, resource: API });
      const res = await h.get(`/realms/${realm.name}/oauth/authorize?${params}`, {
        redirect: 'manual',
        headers: { cookie: `pa_sid=${sid}` },
      });
      assert.equal(res.status, 303);
      return new URL(res.headers.get('location') ?? '');
    };
    const reused = await authorizeWith('openid read');
    assert.ok(reused.href.startsWith(REDIRECT), `the session two minutes old is reused: ${reused.href}`);
    const fresh = await authorizeWith('openid recent');
    assert.equal(fresh.origin, 'https://login.example.com', 'a 60-second scope needs a new sign-in');
    const [row] = await rows(
      h,
      'select max_age, completed_factors from signin_transactions where realm_id = $1 and id = $2',
      [realm.id, fresh.searchParams.get('transaction_id')],
    );
    assert.equal(row?.max_age, 60);
    assert.deepEqual(row?.completed_factors, []);
  });
});
