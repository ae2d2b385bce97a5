// Linking an upstream identity to an existing account (spec doc 1, link_account; docs/federation.md,
// Linking and just-in-time accounts): only after the account proves itself in the same sign-in,
// never by the email address alone; upstream MFA when the connection trusts it, and never as a
// way out of a recovery restriction.
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
import { actionTypes, PASSWORD, rows } from '../../harness/signin-kit.ts';
import { type Standin, startStandin } from '../../harness/upstream-standin.ts';

async function setupWith(t: Parameters<typeof federationSetup>[0], connection: Record<string, unknown> = {}) {
  const s = await federationSetup(t);
  const up = await startStandin(t);
  const c = await connectStandin(s, up, 'corp', connection);
  const alice = await s.h.createUser(s.realm, { email: 'alice@example.com', password: PASSWORD });
  return { s, up, c, alice };
}

async function federate(s: FederationSetup, up: Standin) {
  const tx = await headless(s);
  const started = await startFederation(tx, 'corp');
  await openCallback(await up.authorize(started.body.external_redirect));
  return { tx, state: (await tx.get()).body };
}

const linksOf = (s: FederationSetup) =>
  rows(s.h, 'select * from linked_identities where realm_id = $1 order by created_at', [s.realm.id]);

describe('federation › linking', () => {
  test('case=an upstream email held by an account links only after that account proves itself/mode=headless', async (t) => {
    const { s, up, alice } = await setupWith(t);
    up.account = { sub: 'g-42', email: 'alice@example.com', email_verified: true, name: 'Alice' };
    const users = await usersOf(s);
    const { tx, state } = await federate(s, up);
    assert.equal(state.notice, 'account_conflict');
    assert.deepEqual(actionTypes(state), ['link_account', 'identify', 'password']);
    await nothingLinkedNothingIssued(s, users);

    const wrong = await tx.step('password', {
      identifier: 'alice@example.com',
      password: 'not her password',
    });
    assert.equal(wrong.body.status, 'pending');
    assert.equal((await linksOf(s)).length, 0, 'a wrong password links nothing');

    const proved = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(proved.body.status, 'completed', JSON.stringify(proved.body));
    assert.deepEqual(proved.body.completed_factors, ['pwd', 'fed']);
    const [link] = await linksOf(s);
    assert.equal(link?.user_id, alice.id);
    assert.equal(link?.provenance, 'link');
    assert.equal(link?.upstream_subject, 'g-42');
    assert.equal(await usersOf(s), users, 'no account was made');

    // From now on the upstream alone signs Alice in.
    const next = await federate(s, up);
    assert.equal(next.state.status, 'completed');
    const [session] = await rows(
      s.h,
      `select s.user_id from authorization_codes a join sessions s on s.realm_id = a.realm_id and s.id = a.session_id
        where a.realm_id = $1 and a.transaction_id = $2`,
      [s.realm.id, next.tx.id],
    );
    assert.equal(session?.user_id, alice.id);
  });

  test('case=without just-in-time accounts an unknown identity waits for any account to prove itself/mode=headless', async (t) => {
    const { s, up, alice } = await setupWith(t, { jit_provisioning: false });
    const users = await usersOf(s);
    const { tx, state } = await federate(s, up);
    assert.equal(state.notice, undefined, 'no account holds the address: no conflict');
    assert.ok(actionTypes(state).includes('link_account'));
    await nothingLinkedNothingIssued(s, users);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed');
    assert.equal((await linksOf(s))[0]?.user_id, alice.id);
  });

  test('case=linking_policy none never links; the account signs in without the link/mode=headless', async (t) => {
    const { s, up } = await setupWith(t, { linking_policy: 'none' });
    up.account = { sub: 'g-42', email: 'alice@example.com', email_verified: true };
    const { tx, state } = await federate(s, up);
    assert.equal(state.notice, 'account_conflict');
    assert.ok(!actionTypes(state).includes('link_account'));
    await tx.step('identify', { identifier: 'alice@example.com' });
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed');
    assert.deepEqual(done.body.completed_factors, ['pwd']);
    assert.equal((await linksOf(s)).length, 0);
  });

  test('case=trusted upstream MFA counts as the second factor; untrusted it does not/mode=headless', async (t) => {
    const { s, up, c } = await setupWith(t, { trust_upstream_mfa: true });
    up.account = {
      sub: 'mfa-user',
      email: 'bob@upstream.example',
      email_verified: true,
      amr: ['pwd', 'mfa'],
    };
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required' } });
    const first = await federate(s, up);
    assert.equal(first.state.status, 'completed', JSON.stringify(first.state));
    assert.deepEqual(first.state.completed_factors, ['fed', 'fed_mfa']);
    const [session] = await rows(s.h, 'select * from sessions where realm_id = $1 and amr @> $2', [
      s.realm.id,
      ['fed_mfa'],
    ]);
    assert.equal(session?.acr, 'mfa');

    await s.admin.call('PATCH', `/identity-providers/${c.id}`, { trust_upstream_mfa: false });
    const second = await federate(s, up);
    assert.equal(second.state.status, 'pending');
    assert.deepEqual(second.state.completed_factors, ['fed']);
    assert.ok(actionTypes(second.state).includes('enroll_totp'), 'MFA is still owed');
  });

  test('case=upstream MFA never lifts a recovery restriction/mode=headless', async (t) => {
    const { s, up, alice } = await setupWith(t, { trust_upstream_mfa: true });
    up.account = { sub: 'g-alice', email: 'alice@upstream.example', email_verified: true, amr: ['mfa'] };
    // Alice links the upstream identity first (no conflict: the upstream address is not hers).
    await s.h.ctx.db.query(
      `insert into linked_identities (realm_id, id, user_id, provider_id, upstream_issuer, upstream_subject, provenance,
         created_at, updated_at)
       select $1, 'lid_recovery', $2, id, $3, 'g-alice', 'link', now(), now() from identity_providers where realm_id = $1`,
      [s.realm.id, alice.id, up.issuer],
    );
    await s.h.ctx.db.query(`update users set state = 'recovery_restricted' where realm_id = $1 and id = $2`, [
      s.realm.id,
      alice.id,
    ]);
    const { state } = await federate(s, up);
    assert.equal(state.status, 'completed', JSON.stringify(state));
    assert.deepEqual(state.completed_factors, ['fed', 'fed_mfa']);
    const [user] = await rows(s.h, 'select state from users where realm_id = $1 and id = $2', [
      s.realm.id,
      alice.id,
    ]);
    assert.equal(user?.state, 'recovery_restricted', 'still restricted');
    const [session] = await rows(s.h, 'select * from sessions where realm_id = $1 and user_id = $2', [
      s.realm.id,
      alice.id,
    ]);
    assert.equal(session?.recovery_restricted, true);
    const reactivated = await rows(
      s.h,
      `select 1 from outbox where realm_id = $1 and event_type = 'user.reactivated'`,
      [s.realm.id],
    );
    assert.equal(reactivated.length, 0);
  });
});
