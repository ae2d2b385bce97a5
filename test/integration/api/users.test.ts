// The users administration API: create, read, list, password, compromised password, suspend,
// lock, reactivate, session revocation and deletion, through HTTP with their stored effects.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { findPasswordVerifier } from '../../../src/users/users.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/harness.ts';
import { recoverySetup, tokensFor } from '../../harness/recovery-kit.ts';
import { audits, count, events, PASSWORD, rows } from '../../harness/signin-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked member by member
type Body = any;
const body = async (res: Response): Promise<Body> => res.json();

async function setup(t: TestContext, opts: HarnessOptions = {}) {
  const h = await startHarness(t, opts);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { h, realm, admin };
}

/** A realm role holding exactly these permissions. */
async function roleWith(h: Harness, realm: RealmRow, name: string, permissions: string[]): Promise<string> {
  await h.ctx.db.query(`insert into roles (realm_id, id, name, permissions) values ($1, $2, $3, $4)`, [
    realm.id,
    `rol_${name}`,
    name,
    permissions,
  ]);
  return name;
}

const userState = async (h: Harness, realm: RealmRow, id: string) =>
  (await rows(h, 'select state from users where realm_id = $1 and id = $2', [realm.id, id]))[0]?.state;

const liveSessions = (h: Harness, realm: RealmRow, userId: string) =>
  count(h, 'select 1 from sessions where realm_id = $1 and user_id = $2 and revoked_at is null', [
    realm.id,
    userId,
  ]);

describe('users API › create', () => {
  test('case=creates an account with identifiers and never shows password material', async (t) => {
    const { h, realm, admin } = await setup(t);
    const res = await admin.call('POST', '/users', {
      email: 'Ada@Example.com',
      username: 'ada',
      phone: '+4915112345678',
      display_name: 'Ada L.',
      password: 'analytical-engine',
      email_verified: true,
      required_actions: ['configure_totp'],
    });
    assert.equal(res.status, 201);
    const text = await res.text();
    assert.doesNotMatch(text, /password"|argon|analytical/);
    const user = JSON.parse(text);
    assert.match(user.id, /^usr_[0-9a-z]{26}$/);
    assert.equal(user.state, 'active');
    assert.equal(user.display_name, 'Ada L.');
    assert.deepEqual(user.required_actions, ['configure_totp']);
    assert.ok(!Number.isNaN(Date.parse(user.created_at)));
    const byType = Object.fromEntries(user.identifiers.map((i: Body) => [i.type, i]));
    assert.deepEqual(
      { ...byType.email, id: undefined },
      { id: undefined, type: 'email', value: 'Ada@Example.com', verified: true, primary: true },
    );
    assert.equal(byType.phone.value, '+4915112345678');
    assert.equal(byType.phone.verified, false);
    assert.equal(byType.phone.primary, false);
    assert.equal(byType.username.primary, false);

    const verifier = await findPasswordVerifier(h.ctx.db, realm.id, user.id);
    assert.ok(verifier && (await h.ctx.hasher.verify('analytical-engine', verifier)));
    const [event] = (await events(h, realm, 'user.created')).filter((e) => e.data.user_id === user.id);
    assert.deepEqual(event?.data, { user_id: user.id, created_via: 'admin' });
    const [audit] = (await audits(h, realm, 'user.created')).filter((a) => a.subject_id === user.id);
    assert.equal(audit?.actor_id, admin.userId);

    const read = await admin.call('GET', `/users/${user.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(await body(read), user);
  });

  test('case=an account without a password and with only a username', async (t) => {
    const { h, realm, admin } = await setup(t);
    const res = await admin.call('POST', '/users', { username: 'solo' });
    assert.equal(res.status, 201);
    const user = await body(res);
    assert.deepEqual(
      user.identifiers.map((i: Body) => [i.type, i.primary]),
      [['username', true]],
    );
    assert.equal(await findPasswordVerifier(h.ctx.db, realm.id, user.id), null);
  });

  test('case=refuses bad bodies: 400 for shape, 422 for values', async (t) => {
    const { admin } = await setup(t);
    const cases: [unknown, number, string][] = [
      [{ email: 'a@example.com', is_admin: true }, 400, 'invalid_request'],
      [{ email: 42 }, 400, 'invalid_request'],
      [{ email: 'a@example.com', email_verified: 'yes' }, 400, 'invalid_request'],
      [{}, 422, 'validation_failed'],
      [{ display_name: 'No Identifier' }, 422, 'validation_failed'],
      [{ email: 'not-an-email' }, 422, 'validation_failed'],
      [{ phone: '0151 123' }, 422, 'validation_failed'],
      [{ username: 'has space' }, 422, 'validation_failed'],
      [{ email: 'b@example.com', password: 'short' }, 422, 'validation_failed'],
      [{ email: 'b@example.com', required_actions: ['accept_terms'] }, 422, 'validation_failed'],
      [{ username: 'nomail', email_verified: true }, 422, 'validation_failed'],
    ];
    for (const [input, status, code] of cases) {
      const res = await admin.call('POST', '/users', input);
      assert.equal(res.status, status, JSON.stringify(input));
      assert.equal((await body(res)).code, code, JSON.stringify(input));
    }
  });

  test('case=identifiers are unique per realm, email ignoring case', async (t) => {
    const { h, realm, admin } = await setup(t);
    await h.createUser(realm, { email: 'taken@example.com', username: 'taken' });
    assert.equal((await admin.call('POST', '/users', { phone: '+15550001111' })).status, 201);
    for (const input of [
      { email: 'TAKEN@example.com' },
      { username: 'Taken' },
      { email: 'fresh@example.com', phone: '+15550001111' },
    ]) {
      const res = await admin.call('POST', '/users', input);
      assert.equal(res.status, 409, JSON.stringify(input));
      assert.equal((await body(res)).code, 'conflict');
    }
    assert.equal(
      await count(h, 'select 1 from users where realm_id = $1 and created_via = $2', [realm.id, 'admin']),
      3,
      'refused creations leave no account behind (the harness users are created_via admin too)',
    );
    const other = await h.createRealm();
    const otherAdmin = await apiCaller(h, other);
    assert.equal((await otherAdmin.call('POST', '/users', { email: 'taken@example.com' })).status, 201);
  });

  test('case=needs a token and realm.users.write', async (t) => {
    const { h, realm } = await setup(t);
    const none = await h.get(`/api/v1/realms/${realm.name}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'x@example.com' }),
    });
    assert.equal(none.status, 401);
    const reader = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'reader', ['realm.users.read'])],
    });
    const res = await reader.call('POST', '/users', { email: 'x@example.com' });
    assert.equal(res.status, 403);
    assert.equal((await body(res)).code, 'forbidden');
    assert.equal((await reader.call('GET', '/users')).status, 200);
  });
});

describe('users API › read and list', () => {
  test('case=404 for unknown, malformed, deleted and other-realm users', async (t) => {
    const { h, realm, admin } = await setup(t);
    const other = await h.createRealm();
    const foreign = await h.createUser(other, { email: 'foreign@example.com' });
    const gone = await h.createUser(realm, { email: 'gone@example.com' });
    assert.equal((await admin.call('DELETE', `/users/${gone.id}`)).status, 204);
    for (const id of ['usr_00000000000000000000000000', 'nope', foreign.id, gone.id]) {
      const res = await admin.call('GET', `/users/${id}`);
      assert.equal(res.status, 404, id);
      assert.equal((await body(res)).code, 'not_found');
    }
    const caller = await apiCaller(h, realm, { roles: ['resource-server'] });
    assert.equal((await caller.call('GET', `/users/${admin.userId}`)).status, 403);
  });

  test('case=keyset pages cover every account once; limits are capped', async (t) => {
    const { h, realm, admin } = await setup(t, {
      overrides: { 'limits.default_page_size': 2, 'limits.max_page_size': 3 },
    });
    for (let i = 0; i < 6; i++) await h.createUser(realm, { email: `u${i}@example.com` });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: Response = await admin.call('GET', `/users${cursor ? `?cursor=${cursor}` : ''}`);
      assert.equal(res.status, 200);
      const page = await body(res);
      assert.ok(page.items.length <= 2, 'default page size');
      seen.push(...page.items.map((u: Body) => u.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 4);
    assert.equal(seen.length, 7);
    assert.equal(new Set(seen).size, 7);
    assert.deepEqual(seen, [...seen].sort());
    const big = await body(await admin.call('GET', '/users?limit=500'));
    assert.equal(big.items.length, 3, 'a larger limit is reduced to the maximum');
    assert.equal(typeof big.next_cursor, 'string');
  });

  test('case=invalid cursors and parameters answer 400 invalid_request', async (t) => {
    const { h, realm, admin } = await setup(t);
    for (let i = 0; i < 3; i++) await h.createUser(realm, { email: `c${i}@example.com` });
    const first = await body(await admin.call('GET', '/users?limit=1'));
    assert.ok(first.next_cursor);
    assert.equal((await admin.call('GET', `/users?limit=1&cursor=${first.next_cursor}`)).status, 200);
    const other = await h.createRealm();
    await h.createUser(other, { email: 'o1@example.com' });
    const otherAdmin = await apiCaller(h, other);
    const bad = [
      '/users?cursor=not-a-cursor',
      `/users?cursor=${Buffer.from('{"a":"usr_x"}').toString('base64url')}`,
      `/users?cursor=${first.next_cursor}&identifier=c1@example.com`,
      '/users?limit=0',
      '/users?limit=ten',
      '/users?limit=1&limit=2',
      '/users?sort=id',
    ];
    for (const path of bad) {
      const res = await admin.call('GET', path);
      assert.equal(res.status, 400, path);
      assert.equal((await body(res)).code, 'invalid_request', path);
    }
    const foreign = await otherAdmin.call('GET', `/users?cursor=${first.next_cursor}`);
    assert.equal(foreign.status, 400, "another realm's cursor");
  });

  test('case=the identifier filter matches exactly, email ignoring case', async (t) => {
    const { h, realm, admin } = await setup(t);
    const grace = await h.createUser(realm, { email: 'grace@example.com', username: 'grace' });
    await h.createUser(realm, { email: 'grace2@example.com' });
    for (const q of ['GRACE@example.com', 'grace', 'Grace']) {
      const page = await body(await admin.call('GET', `/users?identifier=${encodeURIComponent(q)}`));
      assert.deepEqual(
        page.items.map((u: Body) => u.id),
        [grace.id],
        q,
      );
      assert.equal(page.next_cursor, null);
    }
    const none = await body(await admin.call('GET', '/users?identifier=grace%40example'));
    assert.deepEqual(none.items, []);
  });

  test('case=with data_access.log_identity_reads, reads leave audit evidence', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'watched@example.com' });
    await admin.call('GET', `/users/${user.id}`);
    assert.equal((await audits(h, realm, 'user.read')).length, 0, 'off by default');
    await h.setPolicy(realm, { data_access: { log_identity_reads: true } });
    assert.equal((await admin.call('GET', `/users/${user.id}`)).status, 200);
    assert.equal((await admin.call('GET', '/users?identifier=watched@example.com')).status, 200);
    const [read] = await audits(h, realm, 'user.read');
    assert.equal(read?.category, 'data_access');
    assert.equal(read?.subject_id, user.id);
    assert.equal(read?.actor_id, admin.userId);
    const [search] = await audits(h, realm, 'user.search');
    assert.deepEqual(search?.data, { result_count: 1, filtered: true });
  });
});

describe('users API › profile', () => {
  test('case=PATCH changes or clears the display name, audited once per real change', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'carol@example.com', displayName: 'Carol' });
    h.clock.advance(2_000);
    const res = await admin.call('PATCH', `/users/${user.id}`, { display_name: 'Carol K.' });
    assert.equal(res.status, 200);
    const b = await body(res);
    assert.deepEqual(
      [b.id, b.display_name, b.identifiers[0]?.value],
      [user.id, 'Carol K.', 'carol@example.com'],
    );
    const [row] = await rows(h, 'select profile_updated_at from users where realm_id = $1 and id = $2', [
      realm.id,
      user.id,
    ]);
    assert.ok(new Date(String(row?.profile_updated_at)).getTime() > user.profile_updated_at.getTime());
    const [audit] = await audits(h, realm, 'user.updated');
    assert.deepEqual([audit?.subject_id, audit?.data], [user.id, { fields: ['display_name'] }]);
    // The same value again changes nothing; null clears the name.
    assert.equal((await admin.call('PATCH', `/users/${user.id}`, { display_name: 'Carol K.' })).status, 200);
    assert.equal((await audits(h, realm, 'user.updated')).length, 1);
    const cleared = await admin.call('PATCH', `/users/${user.id}`, { display_name: null });
    assert.equal((await body(cleared)).display_name, null);
    assert.equal((await audits(h, realm, 'user.updated')).length, 2);
  });

  test('case=bad bodies and unknown accounts', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'dan@example.com' });
    const cases: [unknown, number, string][] = [
      [{}, 422, 'validation_failed'],
      [{ display_name: '' }, 422, 'validation_failed'],
      [{ display_name: 'x'.repeat(201) }, 422, 'validation_failed'],
      [{ display_name: 7 }, 400, 'invalid_request'],
      [{ email: 'other@example.com' }, 400, 'invalid_request'],
    ];
    for (const [payload, status, code] of cases) {
      const res = await admin.call('PATCH', `/users/${user.id}`, payload);
      assert.deepEqual([res.status, (await body(res)).code], [status, code], JSON.stringify(payload));
    }
    const missing = await admin.call('PATCH', '/users/usr_00000000000000000000000000', { display_name: 'x' });
    assert.equal(missing.status, 404);
  });
});

describe('users API › password', () => {
  test('case=replaces the password and ends the sessions of the account', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'pw@example.com', password: 'old-password-1' });
    const own = await apiCaller(h, realm, {
      audience: 'account',
      userId: user.id,
      password: 'old-password-1',
    });
    assert.equal((await own.call('GET', '/me/sessions')).status, 200);
    const res = await admin.call('PUT', `/users/${user.id}/password`, { password: 'new-password-2' });
    assert.equal(res.status, 204);
    const verifier = await findPasswordVerifier(h.ctx.db, realm.id, user.id);
    assert.ok(verifier && (await h.ctx.hasher.verify('new-password-2', verifier)));
    assert.equal((await own.call('GET', '/me/sessions')).status, 401);
    assert.equal(await liveSessions(h, realm, user.id), 0);
    const revoked = (await events(h, realm, 'session.revoked')).map((e) => e.data);
    assert.deepEqual(revoked, [{ user_id: user.id, session_id: own.sessionId, reason: 'password_changed' }]);
    const [audit] = await audits(h, realm, 'user.password_set');
    assert.equal(audit?.subject_id, user.id);
    assert.equal(audit?.data.temporary, false);
    assert.doesNotMatch(JSON.stringify(audit), /new-password/);
  });

  test('case=a temporary password adds update_password; a final one removes it', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'tmp@example.com' });
    const actions = async () =>
      (await body(await admin.call('GET', `/users/${user.id}`))).required_actions as string[];
    assert.equal(
      (await admin.call('PUT', `/users/${user.id}/password`, { password: 'temporary-pw', temporary: true }))
        .status,
      204,
    );
    assert.deepEqual(await actions(), ['update_password']);
    await admin.call('PUT', `/users/${user.id}/password`, { password: 'final-password' });
    assert.deepEqual(await actions(), []);
  });

  test('case=keeps sessions when the realm policy says so', async (t) => {
    const { h, realm, admin } = await setup(t);
    await h.setPolicy(realm, { password: { revoke_sessions_on_change: false } });
    const user = await h.createUser(realm, { email: 'keep@example.com', password: PASSWORD });
    const own = await apiCaller(h, realm, { audience: 'account', userId: user.id });
    assert.equal(
      (await admin.call('PUT', `/users/${user.id}/password`, { password: 'kept-sessions' })).status,
      204,
    );
    assert.equal((await own.call('GET', '/me/sessions')).status, 200);
    assert.equal((await events(h, realm, 'session.revoked')).length, 0);
  });

  test('case=refusals: short password 422, unknown member 400, permission 403, unknown user 404', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'r@example.com' });
    const path = `/users/${user.id}/password`;
    const short = await admin.call('PUT', path, { password: 'short' });
    assert.equal(short.status, 422);
    assert.equal((await body(short)).errors[0].field, 'password');
    assert.equal((await admin.call('PUT', path, { password: 'long-enough-pw', hash: 'x' })).status, 400);
    assert.equal((await admin.call('PUT', path, {})).status, 422);
    const writer = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'writer', ['realm.users.write', 'realm.users.read'])],
    });
    assert.equal((await writer.call('PUT', path, { password: 'long-enough-pw' })).status, 403);
    const other = await h.createRealm();
    const foreign = await h.createUser(other, { email: 'f@example.com' });
    assert.equal(
      (await admin.call('PUT', `/users/${foreign.id}/password`, { password: 'long-enough-pw' })).status,
      404,
    );
    assert.equal(await findPasswordVerifier(h.ctx.db, realm.id, user.id), null, 'nothing was set');
  });
});

describe('users API › compromised password', () => {
  test('case=marks it, demands a new one, ends every session and raises the alert', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'leak@example.com', password: 'leaked-password' });
    const own = await apiCaller(h, realm, {
      audience: 'account',
      userId: user.id,
      password: 'leaked-password',
    });
    const res = await admin.call('POST', `/users/${user.id}/credentials/password/compromised`);
    assert.equal(res.status, 204);
    const [cred] = await rows(
      h,
      'select compromised from password_credentials where realm_id = $1 and user_id = $2',
      [realm.id, user.id],
    );
    assert.equal(cred?.compromised, true);
    assert.deepEqual((await body(await admin.call('GET', `/users/${user.id}`))).required_actions, [
      'update_password',
    ]);
    assert.equal((await own.call('GET', '/me/sessions')).status, 401);
    assert.equal(
      await count(
        h,
        'select 1 from oauth_grants where realm_id = $1 and user_id = $2 and revoked_at is null',
        [realm.id, user.id],
      ),
      0,
    );
    assert.deepEqual(
      (await events(h, realm, 'security.credential_compromised')).map((e) => e.data),
      [{ user_id: user.id }],
    );
    const [audit] = await audits(h, realm, 'user.password_compromised');
    assert.equal(audit?.signal, 'credential_compromised');
    const alerts = (await events(h, realm, 'security.alert')).filter(
      (e) => e.data.audit_event_id === audit?.id,
    );
    assert.equal(alerts.length, 1);
    assert.equal((await events(h, realm, 'session.revoked'))[0]?.data.reason, 'credential_compromised');
  });

  test('case=an account without a password is 404; a reader is 403', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'nopw@example.com' });
    const res = await admin.call('POST', `/users/${user.id}/credentials/password/compromised`);
    assert.equal(res.status, 404);
    assert.equal((await events(h, realm, 'security.credential_compromised')).length, 0);
    const reader = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'reader', ['realm.users.read'])],
    });
    assert.equal(
      (await reader.call('POST', `/users/${user.id}/credentials/password/compromised`)).status,
      403,
    );
    assert.equal(
      (await admin.call('POST', `/users/${user.id}/credentials/password/compromised`, { why: 1 })).status,
      400,
    );
  });
});

describe('users API › account state', () => {
  test('case=suspend ends everything; reactivate restores the account but not its sessions', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'sus@example.com', password: PASSWORD });
    const own = await apiCaller(h, realm, { audience: 'account', userId: user.id });
    assert.equal((await own.call('GET', '/me/sessions')).status, 200);

    const res = await admin.call('POST', `/users/${user.id}/suspend`, { reason: 'fraud review' });
    assert.equal(res.status, 200);
    assert.equal((await body(res)).state, 'suspended');
    assert.equal((await own.call('GET', '/me/sessions')).status, 401);
    assert.equal(await liveSessions(h, realm, user.id), 0);
    assert.equal(
      await count(h, 'select 1 from user_revocations where realm_id = $1 and user_id = $2', [
        realm.id,
        user.id,
      ]),
      1,
    );
    assert.deepEqual(
      (await events(h, realm, 'user.suspended')).map((e) => e.data),
      [{ user_id: user.id, state: 'suspended' }],
    );
    assert.deepEqual(
      (await events(h, realm, 'session.revoked')).map((e) => e.data),
      [{ user_id: user.id, session_id: own.sessionId, reason: 'user_suspended' }],
    );
    const [audit] = await audits(h, realm, 'user.suspended');
    assert.equal(audit?.reason, 'fraud review');
    assert.equal(audit?.actor_id, admin.userId);
    assert.equal(audit?.data.from, 'active');

    const again = await admin.call('POST', `/users/${user.id}/suspend`, { reason: 'twice' });
    assert.equal(again.status, 409);
    assert.equal((await body(again)).code, 'conflict');

    const back = await admin.call('POST', `/users/${user.id}/reactivate`, { reason: 'cleared' });
    assert.equal(back.status, 200);
    assert.equal((await body(back)).state, 'active');
    assert.deepEqual(
      (await events(h, realm, 'user.reactivated')).map((e) => e.data),
      [{ user_id: user.id, state: 'active', reason: 'ADMINISTRATOR_REACTIVATED' }],
    );
    assert.equal((await audits(h, realm, 'user.reactivated'))[0]?.reason, 'cleared');
    assert.equal((await own.call('GET', '/me/sessions')).status, 401, 'sessions are not restored');
    assert.equal(await liveSessions(h, realm, user.id), 0);
    assert.equal((await admin.call('POST', `/users/${user.id}/reactivate`, { reason: 'again' })).status, 409);
  });

  test('case=lock, then suspend from locked, then reactivate', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'lock@example.com', password: PASSWORD });
    const own = await apiCaller(h, realm, { audience: 'account', userId: user.id });
    const locked = await admin.call('POST', `/users/${user.id}/lock`, { reason: 'too many failures' });
    assert.equal(locked.status, 200);
    assert.equal((await body(locked)).state, 'locked');
    assert.equal((await own.call('GET', '/me/sessions')).status, 401);
    assert.deepEqual(
      (await events(h, realm, 'user.locked')).map((e) => e.data),
      [{ user_id: user.id, state: 'locked' }],
    );
    assert.equal((await audits(h, realm, 'user.locked')).length, 1);
    assert.equal((await admin.call('POST', `/users/${user.id}/lock`, { reason: 'twice' })).status, 409);
    assert.equal((await admin.call('POST', `/users/${user.id}/suspend`, { reason: 'escalate' })).status, 200);
    assert.equal(await userState(h, realm, user.id), 'suspended');
    assert.equal((await admin.call('POST', `/users/${user.id}/reactivate`, { reason: 'ok' })).status, 200);
    assert.equal(await userState(h, realm, user.id), 'active');
  });

  test('case=reactivate lifts a recovery restriction; pending_verification cannot be reactivated', async (t) => {
    // The restriction comes from a real sign-in with a recovery code in place of the TOTP code.
    const s = await recoverySetup(t);
    const { h, realm } = s;
    const admin = await apiCaller(h, realm);
    const user = { id: s.userId };
    await tokensFor(s, s.accountAudience, 'recovery-code');
    assert.equal(await userState(h, realm, user.id), 'recovery_restricted');
    assert.equal(
      (await admin.call('POST', `/users/${user.id}/reactivate`, { reason: 'verified by phone' })).status,
      200,
    );
    assert.equal(await userState(h, realm, user.id), 'active');
    // Speed shortcut: an account awaiting email verification, as self-registration leaves it.
    await h.ctx.db.query(`update users set state = 'pending_verification' where realm_id = $1 and id = $2`, [
      realm.id,
      user.id,
    ]);
    assert.equal((await admin.call('POST', `/users/${user.id}/reactivate`, { reason: 'no' })).status, 409);
  });

  test('case=administrators cannot change their own state', async (t) => {
    const { h, realm, admin } = await setup(t);
    for (const path of ['suspend', 'lock', 'reactivate']) {
      const res = await admin.call('POST', `/users/${admin.userId}/${path}`, { reason: 'self' });
      assert.equal(res.status, 403, path);
      assert.equal((await body(res)).code, 'forbidden');
    }
    assert.equal((await admin.call('DELETE', `/users/${admin.userId}`)).status, 403);
    assert.equal(await userState(h, realm, admin.userId), 'active');
    assert.equal((await admin.call('GET', '/users')).status, 200, 'the token still works');
  });

  test('case=refusals: reason required, permission, other realm', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'ref@example.com' });
    const missing = await admin.call('POST', `/users/${user.id}/suspend`, {});
    assert.equal(missing.status, 422);
    assert.equal((await body(missing)).errors[0].field, 'reason');
    assert.equal((await admin.call('POST', `/users/${user.id}/suspend`)).status, 400, 'no body');
    assert.equal((await admin.call('POST', `/users/${user.id}/suspend`, { reason: '' })).status, 422);
    assert.equal(
      (await admin.call('POST', `/users/${user.id}/suspend`, { reason: 'x', state: 'locked' })).status,
      400,
    );
    const writer = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'writer', ['realm.users.write', 'realm.users.read'])],
    });
    assert.equal((await writer.call('POST', `/users/${user.id}/suspend`, { reason: 'x' })).status, 403);
    assert.equal((await writer.call('POST', `/users/${user.id}/revoke-sessions`)).status, 403);
    const other = await h.createRealm();
    const foreign = await h.createUser(other, { email: 'f@example.com' });
    assert.equal((await admin.call('POST', `/users/${foreign.id}/suspend`, { reason: 'x' })).status, 404);
    assert.equal(await userState(h, other, foreign.id), 'active');
    assert.equal(await userState(h, realm, user.id), 'active');
    const none = await h.get(`/api/v1/realms/${realm.name}/users/${user.id}/suspend`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"reason":"x"}',
    });
    assert.equal(none.status, 401);
  });
});

describe('users API › revoke sessions', () => {
  test('case=ends every session, grant and token of the account, one event per session', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, { email: 'rs@example.com', password: PASSWORD });
    const phone = await apiCaller(h, realm, { audience: 'account', userId: user.id });
    const laptop = await apiCaller(h, realm, { audience: 'account', userId: user.id });
    const res = await admin.call('POST', `/users/${user.id}/revoke-sessions`, { reason: 'lost device' });
    assert.equal(res.status, 200);
    assert.deepEqual(await body(res), { sessions_revoked: 2, grants_revoked: 1 });
    assert.equal((await phone.call('GET', '/me/sessions')).status, 401);
    assert.equal((await laptop.call('GET', '/me/sessions')).status, 401);
    assert.equal(await userState(h, realm, user.id), 'active', 'the account itself stays usable');
    const ended = (await events(h, realm, 'session.revoked')).map((e) => e.data.session_id).sort();
    assert.deepEqual(ended, [phone.sessionId, laptop.sessionId].sort());
    const [audit] = await audits(h, realm, 'user.sessions_revoked');
    assert.equal(audit?.reason, 'lost device');
    assert.equal(audit?.data.sessions_revoked, 2);
    assert.equal(
      (await admin.call('GET', '/users')).status,
      200,
      "the administrator's own session is untouched",
    );
    assert.equal(
      (await admin.call('POST', '/users/usr_00000000000000000000000000/revoke-sessions')).status,
      404,
    );
  });
});

describe('users API › delete', () => {
  test('case=the account is gone, its identifiers are free and its tokens are dead', async (t) => {
    const { h, realm, admin } = await setup(t);
    const user = await h.createUser(realm, {
      email: 'del@example.com',
      username: 'del',
      password: 'delete-me-pw',
    });
    const own = await apiCaller(h, realm, { audience: 'account', userId: user.id, password: 'delete-me-pw' });
    const res = await admin.call('DELETE', `/users/${user.id}`);
    assert.equal(res.status, 204);
    assert.equal(await userState(h, realm, user.id), 'deleted');
    assert.equal((await own.call('GET', '/me/sessions')).status, 401);
    assert.equal((await admin.call('GET', `/users/${user.id}`)).status, 404);
    const page = await body(await admin.call('GET', '/users'));
    assert.ok(!page.items.some((u: Body) => u.id === user.id));
    assert.equal(await findPasswordVerifier(h.ctx.db, realm.id, user.id), null);
    assert.deepEqual(
      (await events(h, realm, 'user.deleted')).map((e) => e.data),
      [{ user_id: user.id }],
    );
    assert.equal((await audits(h, realm, 'user.deleted'))[0]?.subject_id, user.id);
    assert.equal((await events(h, realm, 'session.revoked'))[0]?.data.reason, 'user_deleted');
    const again = await admin.call('POST', '/users', { email: 'DEL@example.com', username: 'del' });
    assert.equal(again.status, 201, 'identifiers can be reused');
    assert.equal((await admin.call('DELETE', `/users/${user.id}`)).status, 404);
    const reader = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'reader', ['realm.users.read'])],
    });
    assert.equal((await reader.call('DELETE', `/users/${(await body(again)).id}`)).status, 403);
  });
});
