// What the callback refuses (docs/federation.md, The callback; RFC 9700 section 4.4 and RFC 9207
// for the mix-up; OpenID Connect Core 3.1.3.7 for the ID token), each with "nothing linked,
// nothing issued" checked: a mix-up, a replayed state, a replayed nonce, a wrong issuer, an
// expired ID token, an unverified upstream email, and an upstream that is down (the
// upstream_unavailable notice, and the circuit that stops calling it).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  connectStandin,
  type FederationSetup,
  federationSetup,
  headless,
  nothingLinkedNothingIssued,
  openCallback,
  startFederation,
  usersOf,
} from '../../harness/federation-kit.ts';
import { actionTypes, count, rows, txRow } from '../../harness/signin-kit.ts';
import { type Standin, type StandinOptions, startStandin } from '../../harness/upstream-standin.ts';

async function connected(t: Parameters<typeof federationSetup>[0], o: StandinOptions = {}) {
  const s = await federationSetup(t);
  const up = await startStandin(t, o);
  await connect(s, up, 'corp');
  return { s, up, users: await usersOf(s) };
}

const connect = (s: FederationSetup, up: Standin, alias: string) => connectStandin(s, up, alias);

/** Starts a sign-in at the connection and runs the upstream's authorization: the callback URL. */
async function throughUpstream(s: FederationSetup, up: Standin, alias = 'corp') {
  const tx = await headless(s);
  const started = await startFederation(tx, alias);
  return { tx, callback: await up.authorize(started.body.external_redirect) };
}

/** The callback was refused as a failed proof: one failure, still pending, nothing more. */
async function refusedProof(s: FederationSetup, txId: string, users: number) {
  const row = await txRow(s.h, s.realm, txId);
  assert.equal(row.status, 'pending');
  assert.equal(row.failures, 1, 'a failed proof');
  assert.deepEqual(row.completed_factors, []);
  await nothingLinkedNothingIssued(s, users);
}

describe('federation › refusals', () => {
  test('case=an answer arriving at another connection callback is a mix-up/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    const other = await startStandin(t);
    await connect(s, other, 'other');
    const { tx, callback } = await throughUpstream(s, up);
    const misrouted = callback.replace('/federation/corp/callback', '/federation/other/callback');
    const res = await openCallback(misrouted);
    assert.equal(res.status, 400);
    assert.match(await res.text(), /wrong_connection/);
    assert.equal(other.hits.token, 0, 'the other upstream was never asked');
    assert.equal(up.hits.token, 0, 'the code was never redeemed');
    await refusedProof(s, tx.id, users);
  });

  test('case=an iss parameter naming another issuer is refused (RFC 9207)/mode=headless', async (t) => {
    const { s, up, users } = await connected(t, { issParameter: true });
    up.misbehave.issParam = 'https://attacker.example';
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    assert.equal(up.hits.token, 0, 'refused before the code is redeemed');
    await refusedProof(s, tx.id, users);
  });

  test('case=a replayed state finds its request used/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    assert.equal((await tx.get()).body.status, 'completed');
    const before = {
      links: await count(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id]),
      users: await usersOf(s),
      codes: await count(
        s.h,
        `select 1 from authorization_codes where realm_id = $1 and client_id = 'web-app'`,
        [s.realm.id],
      ),
      tokenCalls: up.hits.token,
    };
    assert.deepEqual([before.links, before.users], [1, users + 1]);
    const replay = await openCallback(callback);
    assert.equal(replay.status, 400);
    assert.match(await replay.text(), /unknown_request/);
    assert.deepEqual(
      {
        links: await count(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id]),
        users: await usersOf(s),
        codes: await count(
          s.h,
          `select 1 from authorization_codes where realm_id = $1 and client_id = 'web-app'`,
          [s.realm.id],
        ),
        tokenCalls: up.hits.token,
      },
      before,
      'the replay linked, created and issued nothing',
    );
  });

  test('case=an ID token carrying the nonce of an earlier request is refused/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    await throughUpstream(s, up); // an earlier request, whose nonce the upstream will replay
    up.misbehave.replayNonce = true;
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    await refusedProof(s, tx.id, users);
  });

  test('case=an ID token from another issuer is refused/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    up.misbehave.idToken = { iss: 'https://impostor.example' };
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    await refusedProof(s, tx.id, users);
  });

  test('case=an ID token for another audience is refused/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    up.misbehave.idToken = { aud: 'someone-else' };
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    await refusedProof(s, tx.id, users);
  });

  test('case=an expired ID token is refused/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    up.misbehave.idToken = { exp: Math.floor(Date.now() / 1000) - 3600 };
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    await refusedProof(s, tx.id, users);
  });

  test('case=an unverified upstream email of an existing account links nothing and creates nothing/mode=headless', async (t) => {
    const { s, up } = await connected(t);
    await s.h.createUser(s.realm, { email: 'alice@example.com', password: 'correct-horse-9' });
    const users = await usersOf(s);
    up.account = { sub: 'mallory', email: 'alice@example.com', email_verified: false, name: 'Not Alice' };
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    const state = (await tx.get()).body;
    assert.equal(state.status, 'pending');
    assert.equal(state.notice, 'account_conflict');
    assert.deepEqual(state.completed_factors, []);
    assert.equal(state.user, undefined, 'nobody is signed in');
    const link = state.next_actions.find((a: { type: string }) => a.type === 'link_account');
    assert.ok(link, JSON.stringify(state.next_actions));
    assert.equal(link.options.conflict, true);
    assert.equal(link.options.email_hint, 'a***@example.com');
    assert.ok(!actionTypes(state).includes('sms_otp'));
    await nothingLinkedNothingIssued(s, users);
  });

  test('case=an upstream whose discovery fails gives the upstream_unavailable notice, not a 500/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    up.misbehave.fail = { discovery: 503 };
    const tx = await headless(s);
    const r = await tx.step('federation/start', { provider: 'corp' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.notice, 'upstream_unavailable');
    assert.equal(r.body.external_redirect, undefined);
    assert.ok(actionTypes(r.body).includes('password'), 'local methods stay offered');
    await nothingLinkedNothingIssued(s, users);
    const [evidence] = await rows(
      s.h,
      `select * from audit_events where realm_id = $1 and type = 'federation.upstream_failed'`,
      [s.realm.id],
    );
    assert.equal(evidence?.outcome, 'failure');
  });

  test('case=a token or key-set endpoint that is down gives the notice at the callback/mode=headless', async (t) => {
    const { s, up, users } = await connected(t);
    for (const fail of [{ token: 0 }, { jwks: 503 }] as const) {
      const { tx, callback } = await throughUpstream(s, up);
      up.misbehave.fail = fail;
      assert.equal((await openCallback(callback)).status, 200);
      const state = (await tx.get()).body;
      assert.equal(state.status, 'pending', JSON.stringify(fail));
      assert.equal(state.notice, 'upstream_unavailable', JSON.stringify(fail));
      assert.equal((await txRow(s.h, s.realm, tx.id)).failures, 0, 'an outage is no failed proof');
      up.misbehave.fail = {};
    }
    await nothingLinkedNothingIssued(s, users);
  });

  test('case=a client secret that cannot be read gives the notice, not a failed proof/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    await connectStandin(s, up, 'corp', {
      client_secret: undefined,
      client_secret_ref: 'env:NOT_SET_ANYWHERE',
    });
    const users = await usersOf(s);
    const { tx, callback } = await throughUpstream(s, up);
    assert.equal((await openCallback(callback)).status, 200);
    const state = (await tx.get()).body;
    assert.equal(state.notice, 'upstream_unavailable');
    assert.equal((await txRow(s.h, s.realm, tx.id)).failures, 0);
    assert.equal(up.hits.token, 0, 'nothing was sent without the secret');
    await nothingLinkedNothingIssued(s, users);
  });

  test('case=a dead upstream opens its circuit: no more calls until the cool-down/mode=headless', async (t) => {
    const { s, up } = await connected(t);
    up.misbehave.fail = { discovery: 0 };
    const tx = await headless(s);
    for (let i = 0; i < 3; i++) {
      const r = await tx.step('federation/start', { provider: 'corp' });
      assert.equal(r.body.notice, 'upstream_unavailable');
    }
    assert.equal(up.hits.discovery, 3);
    const shed = await tx.step('federation/start', { provider: 'corp' });
    assert.equal(shed.body.notice, 'upstream_unavailable');
    assert.equal(up.hits.discovery, 3, 'the open circuit made no call');
    up.misbehave.fail = {};
    s.h.clock.advance(31_000);
    const back = await tx.step('federation/start', { provider: 'corp' });
    assert.ok(back.body.external_redirect, 'after the cool-down one call goes out and succeeds');
    assert.equal(back.body.notice, undefined, 'the notice is gone');
  });
});
