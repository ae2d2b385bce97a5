// Who may drive a headless transaction and with what: the continuation-token binding, strict step
// bodies, steps not offered now, identifiers and paths that never reach the database, and races
// on one transaction. Every refusal also checks that nothing was issued or advanced.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHeadless } from '../../harness/signin-driver.ts';
import {
  assertNothingIssued,
  issuedSoFar,
  PASSWORD,
  REDIRECT,
  signinSetup,
  txRow,
} from '../../harness/signin-kit.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';

describe('sign-in › races on one transaction', () => {
  test('case=two parallel correct passwords complete the transaction once/mode=headless', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const results = await Promise.all([
      tx.step('password', { password: PASSWORD }),
      tx.step('password', { password: PASSWORD }),
    ]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 409]);
    assert.equal(results.find((r) => r.status === 200)?.body.status, 'completed');
    const s = await issuedSoFar(h, realm);
    assert.deepEqual([s.codes, s.sessions, s.signedIn], [1, 1, 1]);
  });

  test('case=parallel wrong passwords never spend more than the budget/mode=headless', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => tx.step('password', { password: 'wrong' })),
    );
    const statuses = results.map((r) => (r.status === 200 ? r.body.status : r.status));
    assert.equal(statuses.filter((x) => x === 'failed').length, 1, JSON.stringify(statuses));
    assert.equal(statuses.filter((x) => x === 'pending').length, 4);
    assert.equal(statuses.filter((x) => x === 409).length, 3);
    assert.equal((await txRow(h, realm, tx.id)).failures, 5);
    await assertNothingIssued(h, realm);
  });
});

describe('sign-in › headless binding', () => {
  test('case=a missing or wrong continuation token is refused with 403/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const other = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const base = `/api/v1/realms/${realm.name}/auth/transactions/${tx.id}`;
    const post = (
      headers: Record<string, string>,
      body: unknown = { identifier: 'alice@example.com', password: PASSWORD },
    ) =>
      h.get(`${base}/password`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const attempts: [string, Record<string, string>][] = [
      ['no token', {}],
      ['wrong token', { 'x-transaction-token': `pa_tx_${'A'.repeat(43)}` }],
      ['another transaction token', { 'x-transaction-token': other.token }],
      ['the token as a pa_tx cookie', { cookie: `pa_tx=${tx.token}` }],
      ['the token as a bearer', { authorization: `Bearer ${tx.token}` }],
    ];
    for (const [name, headers] of attempts) {
      const r = await post(headers);
      assert.equal(r.status, 403, name);
      assert.equal(((await r.json()) as { code: string }).code, 'forbidden', name);
      const g = await h.get(base, { headers });
      assert.equal(g.status, 403, `GET with ${name}`);
    }
    const row = await txRow(h, realm, tx.id);
    assert.equal(row.status, 'pending');
    assert.equal(row.failures, 0);
    assert.equal(row.identifier, null);
    await assertNothingIssued(h, realm);
    // With its token the same transaction still works.
    assert.equal(
      (await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD })).body.status,
      'completed',
    );
  });

  test('case=the transaction id alone authorizes nothing/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const base = `/api/v1/realms/${realm.name}/auth/transactions/${tx.id}`;
    assert.equal((await h.get(base)).status, 403);
    for (const path of ['identify', 'cancel', 'resume', 'consent', 'totp/enroll']) {
      const r = await h.get(`${base}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-transaction-token': tx.id },
        body: JSON.stringify(
          path === 'identify' ? { identifier: 'x@example.com' } : path === 'consent' ? { approve: true } : {},
        ),
      });
      assert.equal(r.status, 403, path);
    }
    assert.equal((await txRow(h, realm, tx.id)).status, 'pending');
  });

  test('case=a transaction of another realm is not found/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const otherRealm = await h.createRealm();
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const r = await h.get(`/api/v1/realms/${otherRealm.name}/auth/transactions/${tx.id}`, {
      headers: { 'x-transaction-token': tx.token },
    });
    assert.equal(r.status, 404);
    const s = await h.get(`/api/v1/realms/${otherRealm.name}/auth/transactions/${tx.id}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-transaction-token': tx.token },
      body: '{}',
    });
    assert.equal(s.status, 404);
    assert.equal((await txRow(h, realm, tx.id)).status, 'pending');
  });
});

describe('sign-in › strict bodies and offered steps', () => {
  test('case=client-supplied mfa_passed is an unknown member/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const r = await tx.step('password', { password: PASSWORD, mfa_passed: true });
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'invalid_request');
    assert.deepEqual(r.body.errors, [{ field: 'mfa_passed', code: 'unknown_member' }]);
    for (const [path, body] of [
      ['identify', { identifier: 'alice@example.com', completed_factors: ['pwd'] }],
      ['cancel', { status: 'completed' }],
      ['consent', { approve: true, granted: true }],
    ] as const) {
      const s = await tx.step(path, body);
      assert.equal(s.status, 400, path);
      assert.equal(s.body.errors[0].code, 'unknown_member');
    }
    const dup = await h.get(`/api/v1/realms/${realm.name}/auth/transactions/${tx.id}/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-transaction-token': tx.token },
      body: `{"password":"x","Password":"${PASSWORD}"}`,
    });
    assert.equal(dup.status, 400, 'duplicate members (ASCII case folded) are refused');
    const row = await txRow(h, realm, tx.id);
    assert.equal(row.status, 'pending');
    assert.equal(row.failures, 0);
    assert.deepEqual(row.completed_factors, []);
    await assertNothingIssued(h, realm);
  });

  test('case=steps that are not offered now answer 409/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    for (const [path, body] of [
      ['totp', { code: '123456' }],
      ['recovery-code', { code: 'abcde-fghij' }],
      ['totp/enroll', {}],
      ['totp/activate', { code: '123456' }],
      ['password/update', { new_password: 'another-password-1' }],
      ['consent', { approve: true }],
    ] as const) {
      const r = await tx.step(path, body);
      assert.equal(r.status, 409, path);
      assert.equal(r.body.code, 'conflict', path);
    }
    await tx.step('identify', { identifier: 'alice@example.com' });
    const again = await tx.step('identify', { identifier: 'other@example.com' });
    assert.equal(again.status, 409, 'identify is offered only once');
    const row = await txRow(h, realm, tx.id);
    assert.equal(row.status, 'pending');
    assert.equal(row.failures, 0);
    assert.equal(row.identifier, 'alice@example.com');
    await assertNothingIssued(h, realm);
  });

  test('case=NUL characters in identifiers or paths never reach the database/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const identify = await tx.step('identify', { identifier: 'alice\u0000@example.com' });
    assert.equal(identify.status, 422);
    assert.equal(identify.body.errors[0].field, 'identifier');
    const password = await tx.step('password', { identifier: 'alice@example.com\u0000', password: PASSWORD });
    assert.equal(password.status, 422);
    const nulPassword = await tx.step('password', {
      identifier: 'alice@example.com',
      password: `${PASSWORD}\u0000`,
    });
    assert.equal(nulPassword.body.status, 'pending', 'a password with NUL is simply wrong');
    for (const path of [
      `/api/v1/realms/${realm.name}/auth/transactions/${tx.id}%00`,
      `/api/v1/realms/${realm.name}%00/auth/transactions/${tx.id}`,
    ]) {
      assert.equal((await h.get(path, { headers: { 'x-transaction-token': tx.token } })).status, 404, path);
      const step = await h.get(`${path}/cancel`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-transaction-token': tx.token },
        body: '{}',
      });
      assert.equal(step.status, 404, path);
    }
    const row = await txRow(h, realm, tx.id);
    assert.equal(row.status, 'pending');
    assert.equal(row.identifier, 'alice@example.com');
    assert.equal(row.failures, 1);
  });

  test('case=a suspended realm starts and advances nothing/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await h.ctx.db.query(`update realms set state = 'suspended' where id = $1`, [realm.id]);
    h.ctx.realms.forget(realm.name); // as the process that suspends a realm does
    const step = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(step.status, 404);
    assert.equal((await tx.get()).status, 404);
    await assert.rejects(startHeadless(h, realm.name, 'web-app', REDIRECT), /start failed: 404/);
    assert.equal((await txRow(h, realm, tx.id)).status, 'pending');
    await assertNothingIssued(h, realm);
  });

  test('case=an unknown transaction is not found/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const r = await h.get(
      `/api/v1/realms/${realm.name}/auth/transactions/atx_00000000000000000000000000/identify`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-transaction-token': 'pa_tx_x' },
        body: JSON.stringify({ identifier: 'alice@example.com' }),
      },
    );
    assert.equal(r.status, 404);
  });
});
