// Browser-mode transactions: the pa_tx cookie from the authorize endpoint, the Origin and CSRF
// checks on every step, and the pa_sid cookie at completion (transient and remember-me).
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import {
  actionTypes,
  assertNothingIssued,
  type BrowserTx,
  codeOf,
  PASSWORD,
  parseSetCookies,
  REDIRECT,
  redirectParams,
  rows,
  type SetCookie,
  sessionOfTx,
  sha256Hex,
  signinSetup,
  startBrowser,
  txRow,
} from '../../harness/signin-kit.ts';

const LOGIN_UI = 'https://login.example.com/signin';
const UI_ORIGIN = 'https://login.example.com';

const setup = (
  t: TestContext,
  client: { allowRememberMe?: boolean } = {},
  overrides: Record<string, unknown> = {},
) => signinSetup(t, { overrides, loginUi: LOGIN_UI, client: { allowedOrigins: [UI_ORIGIN], ...client } });

const cookieNamed = (res: { headers: Headers }, name: string): SetCookie | undefined =>
  parseSetCookies(res.headers).find((c) => c.name === name);

async function signIn(tx: BrowserTx) {
  const identified = await tx.step('identify', { identifier: 'alice@example.com' });
  assert.equal(identified.status, 200, JSON.stringify(identified.body));
  return tx.step('password', { password: PASSWORD });
}

describe('sign-in › browser binding', () => {
  test('case=authorize redirects to the login UI and sets its own pa_tx cookie/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    assert.equal(tx.response.status, 303);
    assert.equal(tx.response.headers.get('cache-control'), 'no-store');
    assert.equal(`${tx.location.origin}${tx.location.pathname}`, LOGIN_UI);
    assert.deepEqual([...tx.location.searchParams.keys()].sort(), ['realm', 'transaction_id']);
    assert.equal(tx.location.searchParams.get('realm'), realm.name);
    assert.match(tx.id, /^atx_/);
    const c = tx.txCookie.attributes;
    assert.equal(c.httponly, true);
    assert.equal(c.samesite, 'Strict');
    assert.equal(c.path, `/api/v1/realms/${realm.name}/auth/transactions/${tx.id}`);
    assert.equal(c['max-age'], '600');
    assert.equal(c.domain, undefined);
    assert.equal(c.secure, undefined, 'the test origin is http');

    const row = await txRow(h, realm, tx.id);
    assert.equal(row.mode, 'browser');
    assert.equal(row.status, 'pending');
    assert.equal(row.binding_digest, sha256Hex(tx.cookie), 'the cookie is stored only as a digest');

    const state = await tx.get();
    assert.equal(state.status, 200);
    assert.equal(state.headers.get('cache-control'), 'no-store');
    assert.match(state.body.csrf_token, /^[A-Za-z0-9_-]{20,}$/);
    assert.deepEqual(actionTypes(state.body), ['identify', 'password']);
    assert.equal(state.body.status, 'pending');

    assert.equal((await tx.get({})).status, 403, 'GET without the cookie');
    const second = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    assert.notEqual(second.cookie, tx.cookie, 'each transaction has its own cookie');
    assert.equal(
      (await tx.get({ cookie: `pa_tx=${second.cookie}` })).status,
      403,
      "another transaction's cookie",
    );
  });

  test('case=a step needs the cookie, an allowed Origin and the CSRF token/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    const other = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    const otherCsrf = await other.csrf();
    await h.createClient(realm, {
      clientId: 'off',
      name: 'Disabled',
      type: 'spa',
      redirectUris: ['https://off.example.com/cb'],
      allowedOrigins: ['https://off.example.com'],
    });
    await h.ctx.db.query(`update clients set state = 'disabled' where realm_id = $1 and client_id = 'off'`, [
      realm.id,
    ]);
    const body = { identifier: 'alice@example.com', password: PASSWORD };
    const attempts: [string, Record<string, string | null>][] = [
      ['no cookie', { cookie: null }],
      ['wrong cookie', { cookie: 'pa_tx=not-the-cookie' }],
      [
        "another transaction's cookie and CSRF",
        { cookie: `pa_tx=${other.cookie}`, 'x-csrf-token': otherCsrf },
      ],
      ['continuation-style header instead of the cookie', { cookie: null, 'x-transaction-token': tx.cookie }],
      ['no Origin', { origin: null }],
      ['foreign Origin', { origin: 'https://evil.example.com' }],
      ['opaque Origin', { origin: 'null' }],
      ['Origin with a path', { origin: `${UI_ORIGIN}/` }],
      ['Origin of a disabled client', { origin: 'https://off.example.com' }],
      ['no CSRF token', { 'x-csrf-token': null }],
      ['wrong CSRF token', { 'x-csrf-token': 'A'.repeat(43) }],
      ["another transaction's CSRF token", { 'x-csrf-token': otherCsrf }],
      ['non-ASCII CSRF token of the right length', { 'x-csrf-token': `\u00e9${(await tx.csrf()).slice(1)}` }],
      ['CSRF token with a suffix', { 'x-csrf-token': `${await tx.csrf()}x` }],
    ];
    for (const [name, headers] of attempts) {
      const r = await tx.step('password', body, headers);
      assert.equal(r.status, 403, name);
      assert.equal(r.body.code, 'forbidden', name);
      assert.equal(r.headers.get('set-cookie'), null, `${name}: no cookie changes`);
    }
    const row = await txRow(h, realm, tx.id);
    assert.equal(row.status, 'pending');
    assert.equal(row.failures, 0);
    assert.equal(row.identifier, null);
    await assertNothingIssued(h, realm);

    // Both the public origin and a client's allowed origin are accepted.
    const viaPublic = await tx.step(
      'identify',
      { identifier: 'alice@example.com' },
      { origin: h.ctx.config.server.publicOrigin },
    );
    assert.equal(viaPublic.status, 200, JSON.stringify(viaPublic.body));
    const viaClient = await tx.step('password', { password: PASSWORD }, { origin: UI_ORIGIN });
    assert.equal(viaClient.body.status, 'completed', JSON.stringify(viaClient.body));
  });

  test('case=completion sets pa_sid and clears pa_tx/mode=browser', async (t) => {
    const { h, realm, user } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.equal(identified.headers.get('set-cookie'), null, 'no cookie changes while pending');
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal(done.body.csrf_token, undefined, 'csrf_token is given by GET only');
    const params = redirectParams(done.body.redirect_to);
    assert.equal(params.get('state'), 'st-123');
    assert.equal(params.get('iss'), `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`);

    const sid = cookieNamed(done, 'pa_sid');
    assert.ok(sid, 'pa_sid is set');
    assert.equal(sid.attributes.httponly, true);
    assert.equal(sid.attributes.samesite, 'Lax');
    assert.equal(sid.attributes.path, `/realms/${realm.name}/`);
    assert.equal(sid.attributes.domain, undefined);
    assert.equal(sid.attributes['max-age'], String(12 * 3600));
    const cleared = cookieNamed(done, 'pa_tx');
    assert.ok(cleared, 'pa_tx is cleared');
    assert.equal(cleared.value, '');
    assert.equal(cleared.attributes.path, `/api/v1/realms/${realm.name}/auth/transactions/${tx.id}`);
    assert.ok(cleared.attributes['max-age'] === '0' || String(cleared.attributes.expires).includes('1970'));

    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.ok(session);
    assert.equal(session.user_id, user.id);
    assert.equal(session.cookie_digest, sha256Hex(sid.value), 'the session cookie is stored as a digest');
    assert.equal(session.remember_me, false);
    assert.equal(session.transient, false);
    const [code] = await rows(h, 'select * from authorization_codes where realm_id = $1', [realm.id]);
    assert.equal(code?.code_digest, sha256Hex(codeOf(done.body.redirect_to)));
    assert.equal(code?.code_challenge, (await txRow(h, realm, tx.id)).code_challenge);

    const after = await tx.step('cancel', {});
    assert.equal(after.status, 409, 'a completed transaction takes no more steps');
    const read = await tx.get();
    assert.equal(read.body.status, 'completed');
  });

  test('case=a browser transaction cannot be driven headless/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    const r = await h.get(`/api/v1/realms/${realm.name}/auth/transactions/${tx.id}/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-transaction-token': tx.cookie, origin: UI_ORIGIN },
      body: JSON.stringify({ identifier: 'alice@example.com' }),
    });
    assert.equal(r.status, 403);
    assert.equal((await txRow(h, realm, tx.id)).identifier, null);
  });

  test('case=unknown members and steps not offered are refused/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    const r = await tx.step('password', {
      identifier: 'alice@example.com',
      password: PASSWORD,
      mfa_passed: true,
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [{ field: 'mfa_passed', code: 'unknown_member' }]);
    const early = await tx.step('totp', { code: '123456' });
    assert.equal(early.status, 409);
    assert.equal((await txRow(h, realm, tx.id)).failures, 0);
    await assertNothingIssued(h, realm);
  });
});

describe('sign-in › browser session options', () => {
  test('case=a transient sign-in gets a browser-session cookie and no offline_access/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT, {
      extra: { scope: 'openid offline_access' },
    });
    const remembered = await tx.step('remember-me', { remember: true });
    assert.equal(remembered.status, 200);
    const transient = await tx.step('transient', { transient: true });
    assert.equal(transient.status, 200, JSON.stringify(transient.body));
    assert.equal((await tx.step('transient', { transient: false })).status, 422);
    const done = await signIn(tx);
    assert.equal(done.body.status, 'completed');
    const sid = cookieNamed(done, 'pa_sid');
    assert.ok(sid);
    assert.equal(sid.attributes['max-age'], undefined, 'a browser-session cookie');
    assert.equal(sid.attributes.expires, undefined);
    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.equal(session?.transient, true);
    assert.equal(session?.remember_me, false, 'transient wins over remember-me');
    const lifetime =
      new Date(session?.absolute_expires_at).getTime() - new Date(session?.auth_time).getTime();
    assert.ok(lifetime <= 3600_000, `transient session lasts ${lifetime} ms`);
    const [code] = await rows(h, 'select scopes from authorization_codes where realm_id = $1', [realm.id]);
    assert.deepEqual(code?.scopes, ['openid']);
  });

  test('case=remember-me is honoured when the client allows it/mode=browser', async (t) => {
    const { h, realm } = await setup(t, { allowRememberMe: true });
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    assert.equal((await tx.step('remember-me', { remember: true })).status, 200);
    const done = await signIn(tx);
    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.equal(session?.remember_me, true);
    assert.equal(cookieNamed(done, 'pa_sid')?.attributes['max-age'], String(30 * 24 * 3600));
  });

  test('case=remember-me is ignored when the client does not allow it/mode=browser', async (t) => {
    const { h, realm } = await setup(t, { allowRememberMe: false });
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    assert.equal((await tx.step('remember-me', { remember: true })).status, 200);
    const done = await signIn(tx);
    const session = await sessionOfTx(h, realm.id, tx.id);
    assert.equal(session?.remember_me, false);
    assert.equal(cookieNamed(done, 'pa_sid')?.attributes['max-age'], String(12 * 3600));
  });

  test('case=cancel clears pa_tx, sets no session and redirects with an error/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    const cancelled = await tx.step('cancel', {});
    assert.equal(cancelled.body.status, 'cancelled');
    assert.equal(redirectParams(cancelled.body.redirect_to).get('error'), 'access_denied');
    assert.equal(cookieNamed(cancelled, 'pa_sid'), undefined);
    assert.equal(cookieNamed(cancelled, 'pa_tx')?.value, '');
    await assertNothingIssued(h, realm);
  });

  test('case=five wrong passwords fail the transaction and clear pa_tx/mode=browser', async (t) => {
    const { h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    let last = await tx.step('password', { password: 'wrong' });
    for (let i = 0; i < 4; i++) last = await tx.step('password', { password: 'wrong' });
    assert.equal(last.body.status, 'failed');
    assert.equal(last.body.error, 'too_many_failures');
    assert.equal(redirectParams(last.body.redirect_to).get('error'), 'access_denied');
    assert.equal(cookieNamed(last, 'pa_tx')?.value, '');
    assert.equal(cookieNamed(last, 'pa_sid'), undefined);
    assert.equal((await tx.step('password', { password: PASSWORD })).status, 409);
    await assertNothingIssued(h, realm);
  });

  test('case=cookies are Secure when the public origin is https/mode=browser', async (t) => {
    const origin = 'https://id.example.test';
    const { h, realm } = await setup(t, {}, { 'server.public_origin': origin });
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT, { origin });
    assert.equal(tx.txCookie.attributes.secure, true);
    const done = await signIn(tx);
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal(cookieNamed(done, 'pa_sid')?.attributes.secure, true);
    assert.equal(redirectParams(done.body.redirect_to).get('iss'), `${origin}/realms/${realm.name}`);
  });
});
