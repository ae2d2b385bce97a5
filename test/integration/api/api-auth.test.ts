// The bearer check of the administration and account APIs: header only, admin audience from an
// MFA session, permissions through roles, recent authentication, and live revocation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiRoute } from '../../../src/api/api-route.ts';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import { adminAudience } from '../../../src/kernel/audiences.ts';
import { revokeAccount, revokeSession } from '../../../src/sessions/grants.repo.ts';
import { apiCaller, CLI_REDIRECT } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, PASSWORD } from '../../harness/signin-kit.ts';

async function setup(t: Parameters<typeof startHarness>[0]) {
  const h = await startHarness(t, {
    beforeListen: (app, appCtx) => {
      const ctx = () => appCtx;
      app.register(async (scope) => {
        apiRoute(
          scope,
          ctx(),
          'GET',
          '/probe/users',
          { audience: 'admin', permissions: ['realm.users.read'] },
          async ({ caller }) => ({
            id: caller.id,
            kind: caller.kind,
          }),
        );
        apiRoute(
          scope,
          ctx(),
          'POST',
          '/probe/recent',
          { audience: 'admin', recentAuth: true },
          async () => ({ ok: true }),
        );
        apiRoute(scope, ctx(), 'GET', '/me/probe', { audience: 'account' }, async ({ caller }) => ({
          id: caller.id,
        }));
      });
    },
  });
  return { h, realm: await h.createRealm() };
}

test('an administrator token from an MFA session reaches a route that needs realm.users.read', async (t) => {
  const { h, realm } = await setup(t);
  const admin = await apiCaller(h, realm);
  const res = await admin.call('GET', '/probe/users');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { id: admin.userId, kind: 'user' });
});

test('a missing, malformed or query-string token is refused with a Bearer challenge', async (t) => {
  const { h, realm } = await setup(t);
  const admin = await apiCaller(h, realm);
  const none = await h.get(`/api/v1/realms/${realm.name}/probe/users`);
  assert.equal(none.status, 401);
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  const bad = await h.get(`/api/v1/realms/${realm.name}/probe/users`, {
    headers: { authorization: 'Bearer abc.def.ghi' },
  });
  assert.equal(bad.status, 401);
  assert.match(bad.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const query = await h.get(`/api/v1/realms/${realm.name}/probe/users?access_token=${admin.token}`);
  assert.equal(query.status, 400);
  assert.equal(((await query.json()) as { code: string }).code, 'invalid_request');
});

test('an account-audience token is not an administration token, and the reverse', async (t) => {
  const { h, realm } = await setup(t);
  const account = await apiCaller(h, realm, { audience: 'account', roles: ['realm-admin'] });
  assert.equal((await account.call('GET', '/probe/users')).status, 401);
  assert.equal((await account.call('GET', '/me/probe')).status, 200);
  const admin = await apiCaller(h, realm);
  assert.equal((await admin.call('GET', '/me/probe')).status, 401);
});

// No sign-in yields an administration token without MFA (the transaction asks for a second factor
// whenever the administration audience is requested), so the API's own mfa_required refusal has
// no reachable caller; this checks the rule where a caller can meet it.
test('a password alone does not complete a sign-in for the administration audience', async (t) => {
  const { h, realm } = await setup(t);
  await h.createUser(realm, { email: 'plain@example.com', password: PASSWORD });
  const tx = await startHeadless(h, realm.name, CLI_CLIENT_ID, CLI_REDIRECT, {
    resource: [adminAudience(h.ctx.config.server.publicOrigin, realm.name)],
  });
  await tx.step('identify', { identifier: 'plain@example.com' });
  const state = await tx.step('password', { password: PASSWORD });
  assert.notEqual(state.body.status, 'completed');
  assert.deepEqual(actionTypes(state.body), ['enroll_totp', 'enroll_webauthn']);
});

test('a caller without the permission answers 403', async (t) => {
  const { h, realm } = await setup(t);
  const caller = await apiCaller(h, realm, { roles: ['resource-server'] });
  const res = await caller.call('GET', '/probe/users');
  assert.equal(res.status, 403);
  assert.equal(((await res.json()) as { code: string }).code, 'forbidden');
});

test('an old sign-in answers 403 step_up_required with the reauthenticate obligation', async (t) => {
  const { h, realm } = await setup(t);
  const stale = await apiCaller(h, realm);
  // Eleven minutes later the access token has lapsed; the refreshed one keeps the old auth_time.
  h.clock.advance(11 * 60_000);
  const res = await stale.call('POST', '/probe/recent');
  assert.equal(res.status, 403);
  const body = (await res.json()) as { code: string; obligation: unknown };
  assert.equal(body.code, 'step_up_required');
  assert.deepEqual(body.obligation, {
    type: 'reauthenticate',
    required_profile: 'recent',
    max_age_seconds: 600,
  });
  const fresh = await apiCaller(h, realm);
  assert.equal((await fresh.call('POST', '/probe/recent')).status, 200);
});

test('ending the session or revoking the account makes the token inactive at once', async (t) => {
  const { h, realm } = await setup(t);
  const a = await apiCaller(h, realm);
  await h.ctx.db.tx((tx) => revokeSession(tx, realm.id, a.sessionId, 'test', h.ctx.clock.now()));
  assert.equal((await a.call('GET', '/probe/users')).status, 401);
  const b = await apiCaller(h, realm);
  await h.ctx.db.tx((tx) => revokeAccount(tx, realm.id, b.userId, 'test', h.ctx.clock.now()));
  assert.equal((await b.call('GET', '/probe/users')).status, 401);
});

test('a token of another realm is refused', async (t) => {
  const { h, realm } = await setup(t);
  const other = await h.createRealm();
  const a = await apiCaller(h, other);
  const res = await h.get(`/api/v1/realms/${realm.name}/probe/users`, {
    headers: { authorization: `Bearer ${a.token}` },
  });
  assert.equal(res.status, 401);
});

test('forged tokens are refused: alg none, HS256 keyed with the public key, a foreign key, a cnf claim', async (t) => {
  const { h, realm } = await setup(t);
  const admin = await apiCaller(h, realm);
  const { decodeJwt, SignJWT, generateKeyPair, UnsecuredJWT } = await import('jose');
  const claims = decodeJwt(admin.token);
  const none = new UnsecuredJWT(claims).encode();
  const jwks = (await (await h.get(`/realms/${realm.name}/jwks`)).json()) as {
    keys: { n: string; kid: string }[];
  };
  const publicKeyBytes = new TextEncoder().encode(JSON.stringify(jwks.keys[0]));
  const hs256 = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: jwks.keys[0]?.kid ?? '' })
    .sign(publicKeyBytes);
  const foreign = await generateKeyPair('RS256');
  const foreignToken = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: jwks.keys[0]?.kid ?? '' })
    .sign(foreign.privateKey);
  for (const [name, token] of [
    ['none', none],
    ['HS256', hs256],
    ['foreign key', foreignToken],
  ] as const) {
    const res = await h.get(`/api/v1/realms/${realm.name}/probe/users`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 401, name);
    assert.match(res.headers.get('www-authenticate') ?? '', /invalid_token/, name);
  }
});
