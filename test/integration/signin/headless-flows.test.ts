// Headless sign-in flows end to end: what completion issues (code, session, event, audit), the
// JWT response modes, the update_password required action and consent.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { s256Challenge } from '../../../src/kernel/pkce.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  assertNothingIssued,
  audits,
  codeOf,
  events,
  issuedSoFar,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  redirectParams,
  rows,
  sha256Hex,
  signinSetup,
  txRow,
  userRow,
} from '../../harness/signin-kit.ts';
import { grantResources } from '../../harness/token-kit.ts';

const setup = (t: TestContext, client: { consentMode?: 'implicit' | 'required' } = {}) =>
  signinSetup(t, { client, user: { displayName: 'Alice' } });

describe('sign-in › headless flows', () => {
  test('case=password only issues a code bound to the request, a session, an event and audit/mode=headless', async (t) => {
    const { h, realm, user, client } = await setup(t);
    const api = 'https://api.example.com/orders';
    await grantResources(h, realm, client, [api]);
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid profile',
      resource: [api],
      nonce: 'nonce-abc',
    });
    assert.equal(state.status, 200, JSON.stringify(state.body));
    assert.equal(state.body.status, 'completed');
    assert.equal(state.headers.get('cache-control'), 'no-store');
    assert.deepEqual(state.body.user, { display_name: 'Alice', email_hint: 'a***@example.com' });
    assert.deepEqual(state.body.next_actions, []);
    const params = redirectParams(state.body.redirect_to);
    assert.deepEqual([...params.keys()].sort(), ['code', 'iss', 'state']);
    assert.equal(params.get('iss'), `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`);
    const code = codeOf(state.body.redirect_to);

    const [row, ...others] = await rows(h, 'select * from authorization_codes where realm_id = $1', [
      realm.id,
    ]);
    assert.equal(others.length, 0);
    assert.ok(row);
    assert.equal(row.code_digest, sha256Hex(code), 'the code is stored only as its digest');
    assert.notEqual(row.code_digest, code);
    assert.equal(row.client_id, 'web-app');
    assert.equal(row.redirect_uri, REDIRECT);
    assert.equal(row.code_challenge, s256Challenge(tx.verifier));
    assert.equal(row.nonce, 'nonce-abc');
    assert.deepEqual(row.scopes, ['openid', 'profile']);
    assert.deepEqual(row.resources, [api]);
    assert.equal(row.user_id, user.id);
    assert.equal(row.transaction_id, tx.id);
    assert.equal(row.consumed_at, null);
    assert.equal(new Date(row.expires_at).getTime() - new Date(row.created_at).getTime(), 60_000);

    const [session] = await rows(h, 'select * from sessions where realm_id = $1 and id = $2', [
      realm.id,
      row.session_id,
    ]);
    assert.ok(session, 'the code names its session');
    assert.equal(session.user_id, user.id);
    assert.deepEqual(session.amr, ['pwd']);
    assert.equal(session.acr, 'basic');
    assert.equal(session.mfa, false);
    assert.equal(session.cookie_digest, null, 'a headless session has no browser cookie');
    assert.equal(session.revoked_at, null);

    const signedIn = await events(h, realm, 'user.signed_in');
    assert.equal(signedIn.length, 1);
    assert.deepEqual(signedIn[0]?.data, { user_id: user.id, session_id: session.id, client_id: 'web-app' });
    const audit = await audits(h, realm, 'user.signed_in');
    assert.equal(audit.length, 1);
    assert.equal(audit[0]?.subject_id, user.id);
    assert.equal(audit[0]?.data.session_id, session.id);

    const stored = await txRow(h, realm, tx.id);
    assert.equal(stored.status, 'completed');
    assert.equal(stored.redirect_to, state.body.redirect_to);
    assert.ok((await userRow(h, realm, user.id)).last_login_at);
    const read = await tx.get();
    assert.equal(read.body.status, 'completed');
    assert.equal(read.body.csrf_token, undefined, 'csrf_token is for browser transactions');
  });

  for (const mode of ['query.jwt', 'jwt']) {
    test(`case=response_mode ${mode} answers one signed response JWT/mode=headless`, async (t) => {
      const { h, realm } = await setup(t);
      const { state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
        response_mode: mode,
      });
      assert.equal(state.body.status, 'completed', JSON.stringify(state.body));
      const redirect = new URL(state.body.redirect_to);
      assert.equal(`${redirect.origin}${redirect.pathname}`, REDIRECT);
      assert.deepEqual([...redirect.searchParams.keys()], ['response']);
      const jwt = redirect.searchParams.get('response') ?? '';
      const issuer = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`;
      const jwks = createRemoteJWKSet(new URL(`${h.publicUrl}/realms/${realm.name}/jwks`));
      const { payload } = await jwtVerify(jwt, jwks, { issuer, audience: 'web-app' });
      assert.ok(decodeProtectedHeader(jwt).kid);
      assert.equal(payload.state, 'st-123');
      assert.equal(typeof payload.code, 'string');
      const [row] = await rows(h, 'select code_digest from authorization_codes where realm_id = $1', [
        realm.id,
      ]);
      assert.equal(row?.code_digest, sha256Hex(payload.code as string));
      assert.ok(
        typeof payload.exp === 'number' && typeof payload.iat === 'number' && payload.exp > payload.iat,
      );
    });
  }

  test('case=the registered query of the redirect URI is kept as registered/mode=headless', async (t) => {
    const { h, realm } = await setup(t);
    const registered = 'https://app.example.com/cb?tenant=a%20b&x=~y';
    await h.createClient(realm, {
      clientId: 'query-app',
      name: 'Query App',
      type: 'web',
      redirectUris: [registered],
    });
    for (const mode of ['query', 'query.jwt']) {
      const tx = await startHeadless(h, realm.name, 'query-app', registered, { response_mode: mode });
      const done = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
      assert.equal(done.body.status, 'completed');
      assert.ok(done.body.redirect_to.startsWith(`${registered}&`), done.body.redirect_to);
      const params = redirectParams(done.body.redirect_to);
      assert.equal(params.get('tenant'), 'a b');
      assert.equal(params.get('x'), '~y');
    }
    const [code] = await rows(h, 'select redirect_uri from authorization_codes where realm_id = $1 limit 1', [
      realm.id,
    ]);
    assert.equal(code?.redirect_uri, registered);
  });

  test('case=required action update_password is asked after the password and then cleared/mode=headless', async (t) => {
    const { h, realm, user } = await signinSetup(t, {
      user: { email: 'bob@example.com', requiredActions: ['update_password'] },
    });
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'bob@example.com');
    assert.equal(state.body.status, 'pending');
    assert.deepEqual(state.body.next_actions, [
      { type: 'update_password', required: true, fields: ['new_password'] },
    ]);
    await assertNothingIssued(h, realm);

    const tooShort = await tx.step('password/update', { new_password: 'short' });
    assert.equal(tooShort.status, 422);
    assert.equal(tooShort.body.code, 'validation_failed');
    assert.equal((await txRow(h, realm, tx.id)).status, 'pending');

    const done = await tx.step('password/update', { new_password: 'a-brand-new-secret-7' });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual((await userRow(h, realm, user.id)).required_actions, []);
    assert.equal((await audits(h, realm, 'user.password_changed')).length, 1);

    const old = await passwordSignIn(h, realm.name, 'web-app', 'bob@example.com', PASSWORD);
    assert.equal(old.state.body.status, 'pending');
    assert.deepEqual(actionTypes(old.state.body), ['password']);
    const fresh = await passwordSignIn(h, realm.name, 'web-app', 'bob@example.com', 'a-brand-new-secret-7');
    assert.equal(fresh.state.body.status, 'completed');
  });
});

describe('sign-in › consent', () => {
  test('case=consent required offers the requested scopes and a subset is granted/mode=headless', async (t) => {
    const { h, realm, user } = await setup(t, { consentMode: 'required' });
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid profile email',
    });
    assert.equal(state.body.status, 'pending');
    assert.deepEqual(state.body.next_actions, [
      {
        type: 'consent',
        required: true,
        fields: ['approve', 'scopes'],
        options: { scopes: ['openid', 'profile', 'email'], third_party: false },
      },
    ]);
    await assertNothingIssued(h, realm);

    const widened = await tx.step('consent', { approve: true, scopes: ['openid', 'admin'] });
    assert.equal(widened.status, 422);
    assert.equal(widened.body.code, 'validation_failed');
    assert.equal((await txRow(h, realm, tx.id)).status, 'pending');
    await assertNothingIssued(h, realm);
    assert.equal((await rows(h, 'select * from consents where realm_id = $1', [realm.id])).length, 0);

    const done = await tx.step('consent', { approve: true, scopes: ['openid', 'profile'] });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const [code] = await rows(h, 'select scopes from authorization_codes where realm_id = $1', [realm.id]);
    assert.deepEqual(code?.scopes, ['openid', 'profile']);
    const [consent] = await rows(h, 'select * from consents where realm_id = $1 and user_id = $2', [
      realm.id,
      user.id,
    ]);
    assert.deepEqual([...(consent?.scopes ?? [])].sort(), ['openid', 'profile']);
    assert.equal((await audits(h, realm, 'consent.granted')).length, 1);
  });

  test('case=refusing consent fails the transaction with access_denied/mode=headless', async (t) => {
    const { h, realm } = await setup(t, { consentMode: 'required' });
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const refused = await tx.step('consent', { approve: false });
    assert.equal(refused.status, 200);
    assert.equal(refused.body.status, 'failed');
    assert.equal(refused.body.error, 'access_denied');
    assert.deepEqual(refused.body.next_actions, []);
    const params = redirectParams(refused.body.redirect_to);
    assert.equal(params.get('error'), 'access_denied');
    assert.equal(params.get('state'), 'st-123');
    assert.equal(params.get('iss'), `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`);
    assert.equal(params.get('code'), null);
    await assertNothingIssued(h, realm);
    assert.equal((await rows(h, 'select * from consents where realm_id = $1', [realm.id])).length, 0);

    const again = await tx.step('consent', { approve: true });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'conflict');
    await assertNothingIssued(h, realm);
  });

  test('case=stored consent covers the next sign-in and prompt=consent asks again/mode=headless', async (t) => {
    const { h, realm } = await setup(t, { consentMode: 'required' });
    const first = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid profile',
    });
    assert.deepEqual(actionTypes(first.state.body), ['consent']);
    assert.equal((await first.tx.step('consent', { approve: true })).body.status, 'completed');

    const second = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'profile openid',
    });
    assert.equal(second.state.body.status, 'completed', 'the stored consent covers the same scopes');

    const wider = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid profile email',
    });
    assert.deepEqual(actionTypes(wider.state.body), ['consent'], 'a new scope needs consent again');

    const prompted = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      scope: 'openid profile',
      prompt: 'consent',
    });
    assert.deepEqual(actionTypes(prompted.state.body), ['consent']);
    const before = await issuedSoFar(h, realm);
    const done = await prompted.tx.step('consent', { approve: true, scopes: ['openid'] });
    assert.equal(done.body.status, 'completed');
    const after = await issuedSoFar(h, realm);
    assert.equal(after.codes, before.codes + 1);
  });

  test('case=prompt=consent asks a client that does not require consent/mode=headless', async (t) => {
    const { h, realm } = await setup(t);
    const plain = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(plain.state.body.status, 'completed');
    const prompted = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD, {
      prompt: 'consent',
    });
    assert.deepEqual(actionTypes(prompted.state.body), ['consent']);
  });

  test('case=consent before primary authentication is not offered/mode=headless', async (t) => {
    const { h, realm } = await setup(t, { consentMode: 'required' });
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const early = await tx.step('consent', { approve: true });
    assert.equal(early.status, 409);
    assert.equal(early.body.code, 'conflict');
    assert.equal((await txRow(h, realm, tx.id)).status, 'pending');
    assert.equal((await rows(h, 'select * from consents where realm_id = $1', [realm.id])).length, 0);
    await assertNothingIssued(h, realm);
  });
});

describe('sign-in › password change ends other sessions', () => {
  test('case=update_password revokes the sessions of the old password/mode=headless', async (t) => {
    const { h, realm, user } = await signinSetup(t, { user: { email: 'carol@example.com' } });
    const first = await passwordSignIn(h, realm.name, 'web-app', 'carol@example.com');
    assert.equal(first.state.body.status, 'completed');
    const [oldSession] = await rows(h, 'select id from sessions where realm_id = $1 and user_id = $2', [
      realm.id,
      user.id,
    ]);
    await h.ctx.db.query(
      `update users set required_actions = '{update_password}' where realm_id = $1 and id = $2`,
      [realm.id, user.id],
    );

    const second = await passwordSignIn(h, realm.name, 'web-app', 'carol@example.com');
    const done = await second.tx.step('password/update', { new_password: 'a-brand-new-secret-1' });
    assert.equal(done.body.status, 'completed');
    const [revoked] = await rows(
      h,
      'select revoked_at, revoked_reason from sessions where realm_id = $1 and id = $2',
      [realm.id, oldSession?.id],
    );
    assert.ok(revoked?.revoked_at, 'the earlier session is revoked');
    assert.equal(revoked?.revoked_reason, 'password_changed');
    const revokedEvents = await events(h, realm, 'session.revoked');
    assert.equal(revokedEvents.length, 1);
    assert.deepEqual(revokedEvents[0]?.data, {
      user_id: user.id,
      session_id: oldSession?.id,
      reason: 'password_changed',
    });
    const live = await rows(
      h,
      'select id from sessions where realm_id = $1 and user_id = $2 and revoked_at is null',
      [realm.id, user.id],
    );
    assert.equal(live.length, 1, 'only the session of this sign-in is live');
  });
});
