// Refusals and ends of a headless transaction: the failure budget, unknown and blocked accounts,
// the response-time floor, accounts and clients that change mid-sign-in, cancel, expiry and
// terminal states. Every refusal also checks that nothing was issued.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type JsonResponse, startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  assertNothingIssued,
  audits,
  movableClock,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  redirectParams,
  signinSetup,
  txRow,
} from '../../harness/signin-kit.ts';

/** The parts of a state that may differ between two transactions. */
function shape(r: JsonResponse) {
  const { id: _id, expires_at: _e, ...rest } = r.body;
  return { status: r.status, body: rest };
}

describe('sign-in › failure budget', () => {
  test('case=five wrong passwords fail the transaction with too_many_failures/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    for (let i = 1; i <= 4; i++) {
      const r = await tx.step('password', { password: `wrong-${i}` });
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'pending');
      assert.deepEqual(actionTypes(r.body), ['password']);
      assert.equal(r.body.error, undefined);
      assert.equal((await txRow(h, realm, tx.id)).failures, i);
    }
    const last = await tx.step('password', { password: 'wrong-5' });
    assert.equal(last.status, 200);
    assert.equal(last.body.status, 'failed');
    assert.equal(last.body.error, 'too_many_failures');
    assert.deepEqual(last.body.next_actions, []);
    const params = redirectParams(last.body.redirect_to);
    assert.equal(params.get('error'), 'access_denied');
    assert.equal(params.get('state'), 'st-123');
    assert.equal(params.get('code'), null);
    assert.equal((await audits(h, realm, 'signin.transaction.failed')).length, 1);

    const afterwards = await tx.step('password', { password: PASSWORD });
    assert.equal(afterwards.status, 409);
    assert.equal(afterwards.body.code, 'conflict');
    assert.equal((await tx.step('cancel', {})).status, 409);
    const read = await tx.get();
    assert.equal(read.body.status, 'failed');
    assert.equal(read.body.error, 'too_many_failures');
    assert.equal((await txRow(h, realm, tx.id)).failures, 5);
    await assertNothingIssued(h, realm);
  });

  test('case=an unknown account fails exactly like a wrong password/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const known = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', 'not-the-password');
    const unknown = await passwordSignIn(h, realm.name, 'web-app', 'nobody@example.com', 'not-the-password');
    assert.deepEqual(shape(unknown.state), shape(known.state));
    assert.equal(unknown.state.body.user, undefined);

    // Identify answers the same way too.
    const a = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const b = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    assert.deepEqual(
      shape(await a.step('identify', { identifier: 'alice@example.com' })),
      shape(await b.step('identify', { identifier: 'nobody@example.com' })),
    );

    // The identifier may also come with the password.
    const c = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const d = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const withKnown = await c.step('password', { identifier: 'alice@example.com', password: 'nope-nope' });
    const withUnknown = await d.step('password', { identifier: 'nobody@example.com', password: 'nope-nope' });
    assert.deepEqual(shape(withUnknown), shape(withKnown));

    // Five failures end an unknown account's transaction the same way (one is spent above).
    for (let i = 0; i < 3; i++) await unknown.tx.step('password', { password: 'still-wrong' });
    const ended = await unknown.tx.step('password', { password: 'still-wrong' });
    assert.equal(ended.body.status, 'failed');
    assert.equal(ended.body.error, 'too_many_failures');
    await assertNothingIssued(h, realm);
  });

  test('case=the password step answers no faster than security.min_auth_response/mode=headless', async (t) => {
    const floorMs = 600;
    const { h, realm } = await signinSetup(t, {
      overrides: { 'security.min_auth_response': `${floorMs}ms` },
    });
    assert.equal(h.ctx.config.security.minAuthResponseMs, floorMs);
    const timed = async (identifier: string, password: string) => {
      const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
      await tx.step('identify', { identifier });
      const started = performance.now();
      const r = await tx.step('password', { password });
      return { elapsed: performance.now() - started, status: r.body.status as string };
    };
    const wrong = await timed('alice@example.com', 'wrong-password');
    const unknown = await timed('nobody@example.com', 'wrong-password');
    const right = await timed('alice@example.com', PASSWORD);
    assert.deepEqual([wrong.status, unknown.status, right.status], ['pending', 'pending', 'completed']);
    for (const [name, r] of Object.entries({ wrong, unknown, right })) {
      assert.ok(
        r.elapsed >= floorMs,
        `${name}: answered after ${r.elapsed.toFixed(0)} ms, floor ${floorMs} ms`,
      );
    }
  });
});

describe('sign-in › blocked accounts', () => {
  test('case=suspended, locked, pending_verification and deleted accounts stay pending with account_unavailable/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const bodies: unknown[] = [];
    for (const state of ['suspended', 'locked', 'pending_verification', 'deleted']) {
      const email = `${state.replace('_', '-')}@example.com`;
      const user = await h.createUser(realm, { email, password: PASSWORD });
      await h.ctx.db.query('update users set state = $3 where realm_id = $1 and id = $2', [
        realm.id,
        user.id,
        state,
      ]);
      const { tx, state: s } = await passwordSignIn(h, realm.name, 'web-app', email);
      assert.equal(s.status, 200);
      assert.equal(s.body.status, 'pending', state);
      assert.equal(s.body.error, 'account_unavailable', state);
      assert.deepEqual(s.body.next_actions, [], state);
      assert.equal(s.body.redirect_to, undefined);
      assert.ok(!JSON.stringify(s.body).includes(state), `the body names the state ${state}`);
      const { id: _id, expires_at: _e, user: _u, ...rest } = s.body;
      bodies.push(rest);
      const read = await tx.get();
      assert.equal(read.body.error, 'account_unavailable');
      const retry = await tx.step('password', { password: PASSWORD });
      assert.equal(retry.status, 409, 'nothing is offered to a blocked account');
      assert.equal((await txRow(h, realm, tx.id)).status, 'pending');
    }
    for (const b of bodies.slice(1)) assert.deepEqual(b, bodies[0]);
    await assertNothingIssued(h, realm);
  });
});

describe('sign-in › account changes mid-sign-in', () => {
  test('case=an account suspended after the password gets no code/mode=headless', async (t) => {
    const { h, realm, user } = await signinSetup(t);
    await h.createClient(realm, {
      clientId: 'consent-app',
      name: 'Consent App',
      type: 'web',
      redirectUris: [REDIRECT],
      consentMode: 'required',
    });
    const { tx, state } = await passwordSignIn(h, realm.name, 'consent-app', 'alice@example.com');
    assert.deepEqual(actionTypes(state.body), ['consent']);
    await h.ctx.db.query(`update users set state = 'suspended' where realm_id = $1 and id = $2`, [
      realm.id,
      user.id,
    ]);
    const read = await tx.get();
    assert.equal(read.body.error, 'account_unavailable');
    assert.deepEqual(read.body.next_actions, []);
    const consent = await tx.step('consent', { approve: true });
    assert.equal(consent.status, 409);
    assert.equal((await txRow(h, realm, tx.id)).status, 'pending');
    await assertNothingIssued(h, realm);
  });
});

describe('sign-in › cancel, expiry and terminal states', () => {
  test('case=cancel ends the transaction with an error redirect/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const cancelled = await tx.step('cancel', {});
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.status, 'cancelled');
    assert.deepEqual(cancelled.body.next_actions, []);
    const params = redirectParams(cancelled.body.redirect_to);
    assert.equal(params.get('error'), 'access_denied');
    assert.equal(params.get('state'), 'st-123');
    assert.equal(params.get('iss'), `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`);
    assert.equal((await txRow(h, realm, tx.id)).status, 'cancelled');
    assert.equal((await audits(h, realm, 'signin.transaction.cancelled')).length, 1);
    const late = await tx.step('password', { password: PASSWORD });
    assert.equal(late.status, 409);
    assert.equal(late.body.code, 'conflict');
    assert.equal((await tx.step('cancel', {})).status, 409);
    await assertNothingIssued(h, realm);
  });

  test('case=an expired transaction reads as expired and refuses steps with 409/mode=headless', async (t) => {
    const clock = movableClock();
    const { h, realm } = await signinSetup(t, { clock });
    const ttl = h.ctx.config.tokens.transactionTtlMs;
    const read = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    const stepped = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await read.step('identify', { identifier: 'alice@example.com' });
    assert.equal(new Date(read.start.body.state.expires_at).getTime(), clock.now().getTime() + ttl);

    clock.advance(ttl + 1000);
    const state = await read.get();
    assert.equal(state.status, 200);
    assert.equal(state.body.status, 'expired');
    assert.deepEqual(state.body.next_actions, []);
    assert.equal((await txRow(h, realm, read.id)).status, 'expired');
    const late = await read.step('password', { password: PASSWORD });
    assert.equal(late.status, 409);
    assert.equal(late.body.code, 'conflict');

    // A step is the first call after expiry: refused, and the row records the expiry.
    const direct = await stepped.step('identify', { identifier: 'alice@example.com' });
    assert.equal(direct.status, 409);
    assert.match(direct.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.equal((await txRow(h, realm, stepped.id)).status, 'expired');
    assert.equal((await txRow(h, realm, stepped.id)).identifier, null);
    const pw = await stepped.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(pw.status, 409);
    await assertNothingIssued(h, realm);
  });

  test('case=just before expiry a transaction still completes/mode=headless', async (t) => {
    const clock = movableClock();
    const { h, realm } = await signinSetup(t, { clock });
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    clock.advance(h.ctx.config.tokens.transactionTtlMs - 1000);
    const done = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(done.body.status, 'completed');
  });

  test('case=a client disabled during the sign-in ends it with access_denied/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    await h.ctx.db.query(
      `update clients set state = 'disabled' where realm_id = $1 and client_id = 'web-app'`,
      [realm.id],
    );
    const r = await tx.step('password', { password: PASSWORD });
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'failed');
    assert.equal(r.body.error, 'access_denied');
    assert.equal(redirectParams(r.body.redirect_to).get('error'), 'access_denied');
    assert.deepEqual(r.body.completed_factors, [], 'the password was not even checked into the transaction');
    assert.equal((await tx.step('password', { password: PASSWORD })).status, 409);
    await assertNothingIssued(h, realm);
  });

  test('case=a completed transaction refuses further steps/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(state.body.status, 'completed');
    for (const [path, body] of [
      ['password', { password: PASSWORD }],
      ['identify', { identifier: 'alice@example.com' }],
      ['cancel', {}],
      ['resume', {}],
      ['remember-me', { remember: true }],
    ] as const) {
      const r = await tx.step(path, body);
      assert.equal(r.status, 409, path);
      assert.equal(r.body.code, 'conflict');
    }
    const read = await tx.get();
    assert.equal(read.body.status, 'completed');
    assert.equal(read.body.redirect_to, state.body.redirect_to);
    assert.equal((await txRow(h, realm, tx.id)).status, 'completed');
  });
});
