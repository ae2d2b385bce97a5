// What a recovery-restricted session may do (spec doc 1, Errors, case rule 1; docs/signin.md,
// "Recovery-restricted sessions"): every session here is obtained by really signing in, with a
// recovery code in place of the TOTP code.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import { newId } from '../../../src/platform/ids.ts';
import { seedOrganization } from '../../harness/org-kit.ts';
import {
  bearer,
  type RecoverySetup,
  recoveryCodeSignIn,
  recoverySetup,
  redeem,
  refresh,
  tokensFor,
} from '../../harness/recovery-kit.ts';
import { count, userRow } from '../../harness/signin-kit.ts';

const expect = (
  res: { status: number; body: { code?: string; error?: string } },
  status: number,
  code: string,
) =>
  assert.deepEqual([res.status, res.body?.code ?? res.body?.error], [status, code], JSON.stringify(res.body));

/** Every /me write that exists, except ending sessions. */
function refusedWrites(s: RecoverySetup, orgId: string): [string, string, unknown][] {
  const ms = s.clock.now().getTime();
  return [
    ['POST', '/me/join-requests', { organization_id: orgId }],
    ['POST', `/me/join-requests/${newId('jrq', ms)}/withdraw`, {}],
    ['POST', `/me/invitations/${newId('inv', ms)}/accept`, {}],
    ['POST', `/me/invitations/${newId('inv', ms)}/decline`, {}],
    ['PUT', '/me/support-access', { allowed: false }],
    ['POST', `/me/support-grants/${newId('sgr', ms)}/revoke`, {}],
  ];
}

describe('recovery-restricted sessions › the API edge', () => {
  test('case=refuses every /me write but ending sessions, and reads every /me list/mode=headless', async (t) => {
    const s = await recoverySetup(t);
    const orgId = await seedOrganization(s.h, s.realm);
    const restricted = await tokensFor(s, s.accountAudience, 'recovery-code');
    assert.equal((await userRow(s.h, s.realm, s.userId)).state, 'recovery_restricted');
    const token = restricted.access_token;

    for (const [method, path, body] of refusedWrites(s, orgId)) {
      expect(await bearer(s, token, method, path, body), 403, 'recovery_restricted');
    }
    assert.equal(await count(s.h, 'select 1 from membership_requests where realm_id = $1', [s.realm.id]), 0);

    for (const path of ['/me/sessions', '/me/invitations', '/me/join-requests', '/me/support-grants']) {
      assert.equal((await bearer(s, token, 'GET', path)).status, 200, path);
    }
    const access = await bearer(s, token, 'GET', '/me/support-access');
    assert.equal(access.status, 200);
    assert.equal(access.body.allowed, true, 'the refused PUT changed nothing');
  });

  test('case=ends one session and then every session/mode=headless', async (t) => {
    const s = await recoverySetup(t);
    const other = await tokensFor(s, s.accountAudience, 'totp');
    const restricted = await tokensFor(s, s.accountAudience, 'recovery-code');
    const otherSession = String(decodeJwt(other.access_token).sid);

    const ended = await bearer(s, restricted.access_token, 'DELETE', `/me/sessions/${otherSession}`);
    assert.equal(ended.status, 204, JSON.stringify(ended.body));
    assert.equal((await bearer(s, other.access_token, 'GET', '/me/sessions')).status, 401);

    const all = await bearer(s, restricted.access_token, 'POST', '/me/sessions/revoke-all', {});
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.ok(all.body.sessions_revoked >= 1);
    assert.equal((await bearer(s, restricted.access_token, 'GET', '/me/sessions')).status, 401);
  });

  test('case=an admin token from before the restriction reads nothing and changes nothing/mode=headless', async (t) => {
    const s = await recoverySetup(t);
    const before = await tokensFor(s, s.adminAudience, 'totp');
    assert.equal((await bearer(s, before.access_token, 'GET', '/users')).status, 200);

    await tokensFor(s, s.accountAudience, 'recovery-code');
    const users = await count(s.h, 'select 1 from users where realm_id = $1', [s.realm.id]);
    expect(await bearer(s, before.access_token, 'GET', '/users'), 403, 'mfa_required');
    expect(await bearer(s, before.access_token, 'GET', `/users/${s.userId}`), 403, 'mfa_required');
    const create = { email: 'bob@example.com' };
    expect(await bearer(s, before.access_token, 'POST', '/users', create), 403, 'recovery_restricted');
    assert.equal(await count(s.h, 'select 1 from users where realm_id = $1', [s.realm.id]), users);
  });

  test("case=a TOTP sign-in lifts the account's restriction but not the recovery-code session's/mode=headless", async (t) => {
    const s = await recoverySetup(t);
    const restricted = await tokensFor(s, s.accountAudience, 'recovery-code');
    const strong = await tokensFor(s, s.accountAudience, 'totp');
    assert.equal((await userRow(s.h, s.realm, s.userId)).state, 'active');

    const optOut = { allowed: false };
    expect(
      await bearer(s, restricted.access_token, 'PUT', '/me/support-access', optOut),
      403,
      'recovery_restricted',
    );
    assert.equal((await bearer(s, strong.access_token, 'PUT', '/me/support-access', optOut)).status, 200);
  });
});

describe('recovery-restricted sessions › the token endpoint', () => {
  test('case=an admin-audience code is refused and an account-audience code is redeemed/mode=headless', async (t) => {
    const s = await recoverySetup(t);
    const admin = await redeem(s, await recoveryCodeSignIn(s, s.adminAudience), s.adminAudience);
    expect(admin, 400, 'invalid_grant');
    const account = await redeem(s, await recoveryCodeSignIn(s, s.accountAudience), s.accountAudience);
    assert.equal(account.status, 200, JSON.stringify(account.body));
    // The grant has openid, so the token serves UserInfo too (docs/tokens.md); the account API comes first.
    assert.equal((decodeJwt(account.body.access_token).aud as string[])[0], s.accountAudience);
  });

  test('case=refreshing an admin-audience grant is refused while the account is restricted/mode=headless', async (t) => {
    const s = await recoverySetup(t);
    const before = await tokensFor(s, s.adminAudience, 'totp');
    const account = await tokensFor(s, s.accountAudience, 'recovery-code');

    expect(await refresh(s, before.refresh_token, s.adminAudience), 400, 'invalid_grant');
    const renewed = await refresh(s, account.refresh_token, s.accountAudience);
    assert.equal(renewed.status, 200, JSON.stringify(renewed.body));
    // The refused refresh spent nothing: once the account is restored, the same token refreshes.
    await tokensFor(s, s.accountAudience, 'totp');
    assert.equal((await refresh(s, before.refresh_token, s.adminAudience)).status, 200);
  });
});
