// The account's own sessions (/me/sessions): list, end one, end all, with an account-audience
// token, and what each leaves in the database.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { audits, count, events, PASSWORD, rows } from '../../harness/signin-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked member by member
type Body = any;
const body = async (res: Response): Promise<Body> => res.json();

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const user = await h.createUser(realm, { email: 'me@example.com', password: PASSWORD });
  const current = await apiCaller(h, realm, { audience: 'account', userId: user.id });
  const other = await apiCaller(h, realm, { audience: 'account', userId: user.id });
  return { h, realm, user, current, other };
}

describe('self-service › sessions', () => {
  test("case=lists the caller's live sessions and marks the current one", async (t) => {
    const { h, realm, user, current, other } = await setup(t);
    const stranger = await h.createUser(realm, { email: 'stranger@example.com', password: PASSWORD });
    await apiCaller(h, realm, { audience: 'account', userId: stranger.id });
    const ended = await apiCaller(h, realm, { audience: 'account', userId: user.id });
    const idle = await apiCaller(h, realm, { audience: 'account', userId: user.id });
    const now = h.ctx.clock.now();
    // Speed shortcuts for states users reach without this test's caller: a session ended (as
    // DELETE /me/sessions/{id} ends it, tested below) and one gone idle (moving the harness clock
    // would idle every session of the test).
    await h.ctx.db.query('update sessions set revoked_at = $3 where realm_id = $1 and id = $2', [
      realm.id,
      ended.sessionId,
      now,
    ]);
    await h.ctx.db.query('update sessions set idle_expires_at = $3 where realm_id = $1 and id = $2', [
      realm.id,
      idle.sessionId,
      new Date(now.getTime() - 1000),
    ]);

    const res = await current.call('GET', '/me/sessions');
    assert.equal(res.status, 200);
    const { items } = await body(res);
    assert.deepEqual(items.map((s: Body) => s.id).sort(), [current.sessionId, other.sessionId].sort());
    const mine = items.find((s: Body) => s.id === current.sessionId);
    assert.equal(mine.current, true);
    assert.equal(items.find((s: Body) => s.id === other.sessionId).current, false);
    assert.deepEqual(Object.keys(mine).sort(), [
      'acr',
      'amr',
      'auth_time',
      'client_id',
      'created_at',
      'current',
      'id',
      'last_seen_at',
      'remember_me',
      'transient',
      'user_agent',
    ]);
    // A password sign-in for the account audience (no second factor asked).
    assert.deepEqual([mine.amr, mine.acr], [['pwd'], 'basic']);
    assert.equal(mine.remember_me, false);
    assert.ok(!Number.isNaN(Date.parse(mine.auth_time)));
  });

  test('case=needs an account-audience token', async (t) => {
    const { h, realm } = await setup(t);
    assert.equal((await h.get(`/api/v1/realms/${realm.name}/me/sessions`)).status, 401);
    const admin = await apiCaller(h, realm);
    assert.equal((await admin.call('GET', '/me/sessions')).status, 401);
    assert.equal((await admin.call('POST', '/me/sessions/revoke-all')).status, 401);
    assert.equal(
      await count(h, 'select 1 from sessions where realm_id = $1 and revoked_at is not null', [realm.id]),
      0,
    );
  });

  test('case=ends another session of the caller; the current token keeps working', async (t) => {
    const { h, realm, user, current, other } = await setup(t);
    const res = await current.call('DELETE', `/me/sessions/${other.sessionId}`);
    assert.equal(res.status, 204);
    assert.equal((await other.call('GET', '/me/sessions')).status, 401);
    const list = await body(await current.call('GET', '/me/sessions'));
    assert.deepEqual(
      list.items.map((s: Body) => s.id),
      [current.sessionId],
    );
    const [row] = await rows(h, 'select revoked_reason from sessions where realm_id = $1 and id = $2', [
      realm.id,
      other.sessionId,
    ]);
    assert.equal(row?.revoked_reason, 'user_logout');
    assert.deepEqual(
      (await events(h, realm, 'session.revoked')).map((e) => e.data),
      [{ user_id: user.id, session_id: other.sessionId, reason: 'user_logout' }],
    );
    const [audit] = await audits(h, realm, 'session.revoked');
    assert.equal(audit?.actor_id, user.id);
    assert.equal(audit?.target_id, other.sessionId);
    const again = await current.call('DELETE', `/me/sessions/${other.sessionId}`);
    assert.equal(again.status, 404, 'an ended session is no longer found');
  });

  test("case=another account's session is 404 and stays live", async (t) => {
    const { h, realm, current } = await setup(t);
    const stranger = await h.createUser(realm, { email: 'stranger@example.com', password: PASSWORD });
    const theirs = await apiCaller(h, realm, { audience: 'account', userId: stranger.id });
    const res = await current.call('DELETE', `/me/sessions/${theirs.sessionId}`);
    assert.equal(res.status, 404);
    assert.equal((await body(res)).code, 'not_found');
    assert.equal((await theirs.call('GET', '/me/sessions')).status, 200);
    assert.equal((await current.call('DELETE', '/me/sessions/not-a-session')).status, 404);
    assert.equal((await events(h, realm, 'session.revoked')).length, 0);
  });

  test('case=ending the current session ends its token', async (t) => {
    const { current, other } = await setup(t);
    assert.equal((await current.call('DELETE', `/me/sessions/${current.sessionId}`)).status, 204);
    assert.equal((await current.call('GET', '/me/sessions')).status, 401);
    assert.equal((await other.call('GET', '/me/sessions')).status, 200);
  });

  test('case=revoke-all logs out everywhere and kills every token of the account', async (t) => {
    const { h, realm, user, current, other } = await setup(t);
    const stranger = await h.createUser(realm, { email: 'stranger@example.com', password: PASSWORD });
    const theirs = await apiCaller(h, realm, { audience: 'account', userId: stranger.id });
    const res = await current.call('POST', '/me/sessions/revoke-all');
    assert.equal(res.status, 200);
    assert.deepEqual(await body(res), { sessions_revoked: 2, grants_revoked: 1 });
    assert.equal((await current.call('GET', '/me/sessions')).status, 401);
    assert.equal((await other.call('GET', '/me/sessions')).status, 401);
    assert.equal((await theirs.call('GET', '/me/sessions')).status, 200, 'other accounts are untouched');
    const ended = (await events(h, realm, 'session.revoked')).map((e) => e.data);
    assert.deepEqual(ended.map((d) => d.session_id).sort(), [current.sessionId, other.sessionId].sort());
    assert.ok(ended.every((d) => d.user_id === user.id && d.reason === 'logout_everywhere'));
    assert.equal(
      await count(h, 'select 1 from user_revocations where realm_id = $1 and user_id = $2', [
        realm.id,
        user.id,
      ]),
      1,
    );
    const [audit] = await audits(h, realm, 'user.sessions_revoked');
    assert.equal(audit?.actor_id, user.id);
    assert.equal(audit?.subject_id, user.id);
  });

  test('case=revoke-all refuses an unknown body member', async (t) => {
    const { h, realm, current } = await setup(t);
    const res = await current.call('POST', '/me/sessions/revoke-all', { everything: true });
    assert.equal(res.status, 400);
    assert.equal((await body(res)).code, 'invalid_request');
    assert.equal((await current.call('GET', '/me/sessions')).status, 200);
    assert.equal(await count(h, 'select 1 from user_revocations where realm_id = $1', [realm.id]), 0);
  });
});
