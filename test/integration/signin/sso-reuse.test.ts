// The browser's SSO session (pa_sid) at the authorization endpoint: reused without interaction,
// refused by prompt=login or max_age, confirmed by prompt=select_account, and prompt=none.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { Harness } from '../../harness/harness.ts';
import { json } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  authorizeQuery,
  codeOf,
  PASSWORD,
  parseSetCookies,
  REDIRECT,
  redirectParams,
  rows,
  sha256Hex,
  signinSetup,
  startBrowser,
} from '../../harness/signin-kit.ts';

const LOGIN_UI = 'https://login.example.com/signin';

async function signedInBrowser(t: TestContext, client: { consentMode?: 'required' } = {}) {
  const { h, realm, user } = await signinSetup(t, { loginUi: LOGIN_UI, client });
  const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
  await tx.step('identify', { identifier: 'alice@example.com' });
  if (client.consentMode) await tx.step('password', { password: PASSWORD });
  const done = client.consentMode
    ? await tx.step('consent', { approve: true })
    : await tx.step('password', { password: PASSWORD });
  assert.equal(done.body.status, 'completed');
  const sid = parseSetCookies(done.headers).find((c) => c.name === 'pa_sid')?.value;
  assert.ok(sid, 'completion set pa_sid');
  const [session] = await rows(h, 'select * from sessions where realm_id = $1 and user_id = $2', [
    realm.id,
    user.id,
  ]);
  return { h, realm, user, sid, session };
}

const authorizeWithSession = (
  h: Harness,
  realmName: string,
  sid: string,
  extra: Record<string, string> = {},
) => {
  const { params } = authorizeQuery('web-app', REDIRECT, extra);
  return h.get(`/realms/${realmName}/oauth/authorize?${params}`, {
    redirect: 'manual',
    headers: { cookie: `pa_sid=${sid}` },
  });
};

describe('sign-in › SSO session reuse', () => {
  test('case=a live session completes a new authorization request at once/mode=browser', async (t) => {
    const { h, realm, sid, session } = await signedInBrowser(t);
    const res = await authorizeWithSession(h, realm.name, sid);
    assert.equal(res.status, 303);
    const location = res.headers.get('location') ?? '';
    assert.ok(location.startsWith(REDIRECT), `redirected to the client, not the login UI: ${location}`);
    assert.equal(
      parseSetCookies(res.headers).filter((c) => c.name === 'pa_sid').length,
      0,
      'no new session cookie',
    );
    const [code] = await rows(
      h,
      'select * from authorization_codes where realm_id = $1 and code_digest = $2',
      [realm.id, sha256Hex(codeOf(location))],
    );
    assert.equal(code?.session_id, session?.id, 'the code is bound to the existing session');
    assert.equal(new Date(code?.auth_time).getTime(), new Date(session?.auth_time).getTime());
    const sessions = await rows(h, 'select id from sessions where realm_id = $1', [realm.id]);
    assert.equal(sessions.length, 1, 'no second session');
  });

  test('case=prompt=none with a live session answers without interaction/mode=browser', async (t) => {
    const { h, realm, sid } = await signedInBrowser(t);
    const res = await authorizeWithSession(h, realm.name, sid, { prompt: 'none' });
    assert.equal(res.status, 303);
    const params = redirectParams(res.headers.get('location') ?? '');
    assert.ok(params.get('code'));
    assert.equal(params.get('state'), 'st-123');
  });

  test('case=prompt=none needing consent answers consent_required/mode=browser', async (t) => {
    const { h, realm, sid } = await signedInBrowser(t, { consentMode: 'required' });
    const res = await authorizeWithSession(h, realm.name, sid, { prompt: 'none', scope: 'openid email' });
    const params = redirectParams(res.headers.get('location') ?? '');
    assert.equal(params.get('error'), 'consent_required');
    assert.equal(params.get('code'), null);
  });

  test('case=prompt=login and an exceeded max_age ignore the session/mode=browser', async (t) => {
    const { h, realm, sid } = await signedInBrowser(t);
    for (const extra of [{ prompt: 'login' }, { max_age: '0' }] as Record<string, string>[]) {
      const res = await authorizeWithSession(h, realm.name, sid, extra);
      const location = new URL(res.headers.get('location') ?? '');
      assert.equal(`${location.origin}${location.pathname}`, LOGIN_UI, JSON.stringify(extra));
      const id = location.searchParams.get('transaction_id');
      const [tx] = await rows(h, 'select * from signin_transactions where realm_id = $1 and id = $2', [
        realm.id,
        id,
      ]);
      assert.deepEqual(tx?.completed_factors, [], 'a fresh sign-in');
      assert.equal(tx?.session_id, null);
    }
  });

  test('case=prompt=select_account asks before reusing, and declining starts over/mode=browser', async (t) => {
    const { h, realm, sid, session } = await signedInBrowser(t);
    const res = await authorizeWithSession(h, realm.name, sid, { prompt: 'select_account' });
    const location = new URL(res.headers.get('location') ?? '');
    assert.equal(`${location.origin}${location.pathname}`, LOGIN_UI);
    const txCookie = parseSetCookies(res.headers).find((c) => c.name === 'pa_tx')?.value ?? '';
    const id = location.searchParams.get('transaction_id') ?? '';
    const base = `/api/v1/realms/${realm.name}/auth/transactions/${id}`;
    const state = await json(await h.get(base, { headers: { cookie: `pa_tx=${txCookie}` } }));
    assert.deepEqual(actionTypes(state.body), ['select_account']);
    const post = async (path: string, body: unknown) =>
      json(
        await h.get(`${base}/${path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            cookie: `pa_tx=${txCookie}`,
            origin: h.ctx.config.server.publicOrigin,
            'x-csrf-token': state.body.csrf_token,
          },
          body: JSON.stringify(body),
        }),
      );
    const confirmed = await post('account', { continue: true });
    assert.equal(confirmed.body.status, 'completed');
    const [code] = await rows(
      h,
      'select session_id from authorization_codes where realm_id = $1 and code_digest = $2',
      [realm.id, sha256Hex(codeOf(confirmed.body.redirect_to))],
    );
    assert.equal(code?.session_id, session?.id);

    const again = await authorizeWithSession(h, realm.name, sid, { prompt: 'select_account' });
    const loc2 = new URL(again.headers.get('location') ?? '');
    const cookie2 = parseSetCookies(again.headers).find((c) => c.name === 'pa_tx')?.value ?? '';
    const base2 = `/api/v1/realms/${realm.name}/auth/transactions/${loc2.searchParams.get('transaction_id')}`;
    const s2 = await json(await h.get(base2, { headers: { cookie: `pa_tx=${cookie2}` } }));
    const declined = await json(
      await h.get(`${base2}/account`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie: `pa_tx=${cookie2}`,
          origin: h.ctx.config.server.publicOrigin,
          'x-csrf-token': s2.body.csrf_token,
        },
        body: JSON.stringify({ continue: false }),
      }),
    );
    assert.equal(declined.body.status, 'pending');
    assert.deepEqual(actionTypes(declined.body), ['identify', 'password']);
    assert.deepEqual(declined.body.completed_factors, []);
  });

  test('case=a revoked session is not reused/mode=browser', async (t) => {
    const { h, realm, sid, session } = await signedInBrowser(t);
    await h.ctx.db.query('update sessions set revoked_at = now() where realm_id = $1 and id = $2', [
      realm.id,
      session?.id,
    ]);
    const res = await authorizeWithSession(h, realm.name, sid, { prompt: 'none' });
    assert.equal(redirectParams(res.headers.get('location') ?? '').get('error'), 'login_required');
  });
});
