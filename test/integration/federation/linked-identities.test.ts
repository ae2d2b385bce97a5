// Linked identities and account merge (doc 2, Keys and emergency controls: DELETE
// /users/{user}/linked-identities/{id}; Catalog: user.merged; docs/federation.md): listed and
// removed by administrators and by the account's owner, never the last way in; a merge moves the
// links keeping their ids and erases the other account.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import {
  connectStandin,
  federationSetup,
  headless,
  openCallback,
  startFederation,
} from '../../harness/federation-kit.ts';
import { events, PASSWORD, rows } from '../../harness/signin-kit.ts';
import { startStandin } from '../../harness/upstream-standin.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read member by member
type Body = any;

async function federatedAccount(t: Parameters<typeof federationSetup>[0]) {
  const s = await federationSetup(t);
  const up = await startStandin(t);
  await connectStandin(s, up, 'corp', { config: { client_id: up.clientId, store_tokens: true } });
  const tx = await headless(s);
  const started = await startFederation(tx, 'corp');
  await openCallback(await up.authorize(started.body.external_redirect));
  const [link] = await rows(s.h, 'select * from linked_identities where realm_id = $1', [s.realm.id]);
  if (!link) throw new Error('no link');
  return { s, up, link, userId: String(link.user_id) };
}

describe('federation › linked identities and merge', () => {
  test('case=administrators list and remove links; the last way in stays', async (t) => {
    const { s, link, userId } = await federatedAccount(t);
    const tokens = await rows(s.h, 'select * from upstream_tokens where realm_id = $1', [s.realm.id]);
    assert.equal(tokens.length, 1, 'store_tokens kept the upstream tokens');
    assert.match(String(tokens[0]?.access_token_sealed), /^pa1\./, 'sealed');

    const list = await s.admin.call('GET', `/users/${userId}/linked-identities`);
    assert.equal(list.status, 200);
    const body: Body = await list.json();
    assert.deepEqual(
      body.items.map((i: Body) => [i.id, i.provider_alias, i.upstream_subject, i.provenance]),
      [[link.id, 'corp', 'upstream-1', 'jit']],
    );
    assert.ok(!JSON.stringify(body).includes('sealed'));

    const last = await s.admin.call('DELETE', `/users/${userId}/linked-identities/${link.id}`);
    assert.equal(last.status, 409);
    assert.equal(((await last.json()) as Body).code, 'last_sign_in_method');

    await s.h.ctx.db.query(
      `insert into password_credentials (realm_id, user_id, hash, created_at)
       select realm_id, $2, hash, now() from password_credentials where realm_id = $1 limit 1`,
      [s.realm.id, userId],
    );
    const removed = await s.admin.call('DELETE', `/users/${userId}/linked-identities/${link.id}`);
    assert.equal(removed.status, 204, await removed.clone().text());
    assert.equal(
      (await rows(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id])).length,
      0,
    );
    assert.equal(
      (await rows(s.h, 'select 1 from upstream_tokens where realm_id = $1', [s.realm.id])).length,
      0,
    );
    const [audit] = await rows(
      s.h,
      `select * from audit_events where realm_id = $1 and type = 'federation.identity.unlinked'`,
      [s.realm.id],
    );
    assert.equal(audit?.subject_id, userId);
    const reader = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal((await reader.call('GET', `/users/${userId}/linked-identities`)).status, 403);
  });

  test('case=the owner sees and removes links under /me', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    const c = await connectStandin(s, up);
    const alice = await s.h.createUser(s.realm, { email: 'alice@example.com', password: PASSWORD });
    await s.h.ctx.db.query(
      `insert into linked_identities (realm_id, id, user_id, provider_id, upstream_issuer, upstream_subject, provenance,
         upstream_email, created_at, updated_at) values ($1, 'lid_alice', $2, $3, $4, 'g-1', 'link', 'a@g.example', now(), now())`,
      [s.realm.id, alice.id, c.id, up.issuer],
    );
    const me = await apiCaller(s.h, s.realm, { audience: 'account', userId: alice.id });
    const list: Body = await (await me.call('GET', '/me/linked-identities')).json();
    assert.deepEqual(
      list.items.map((i: Body) => [i.id, i.provider_display_name, i.upstream_email]),
      [['lid_alice', 'Corp', 'a@g.example']],
    );
    assert.equal((await me.call('DELETE', '/me/linked-identities/lid_nobody')).status, 404);
    assert.equal(
      (await me.call('DELETE', '/me/linked-identities/lid_alice')).status,
      204,
      'her password remains',
    );
    assert.deepEqual(((await (await me.call('GET', '/me/linked-identities')).json()) as Body).items, []);
  });

  test('case=a merge moves the links keeping their ids and erases the other account', async (t) => {
    const { s, link, userId: federated } = await federatedAccount(t);
    const alice = await s.h.createUser(s.realm, { email: 'alice@example.com', password: PASSWORD });
    const path = `/users/${alice.id}/merges`;
    assert.equal((await s.admin.call('POST', path, { source_user_id: alice.id, reason: 'x' })).status, 422);
    assert.equal(
      (await s.admin.call('POST', path, { source_user_id: 'usr_nobody', reason: 'x' })).status,
      422,
    );
    assert.equal(
      (await s.admin.call('POST', path, { source_user_id: federated })).status,
      422,
      'a reason is required',
    );
    const res = await s.admin.call('POST', path, {
      source_user_id: federated,
      reason: 'same person, two accounts',
    });
    assert.equal(res.status, 201, await res.clone().text());
    const merged: Body = await res.json();
    assert.equal(merged.user_id, alice.id);
    assert.equal(merged.merged_user_id, federated);
    assert.deepEqual(merged.moved_identity_ids, [link.id]);

    const [moved] = await rows(s.h, 'select * from linked_identities where realm_id = $1', [s.realm.id]);
    assert.deepEqual([moved?.id, moved?.user_id, moved?.provenance], [link.id, alice.id, 'merge']);
    const [gone] = await rows(s.h, 'select state from users where realm_id = $1 and id = $2', [
      s.realm.id,
      federated,
    ]);
    assert.equal(gone?.state, 'deleted');
    const mergedEvents = await events(s.h, s.realm, 'user.merged');
    assert.deepEqual(
      mergedEvents.map((e) => e.data),
      [{ user_id: alice.id, merged_user_id: federated }],
    );
    assert.ok((await events(s.h, s.realm, 'user.deleted')).some((e) => e.data.user_id === federated));
    const [record] = await rows(s.h, 'select * from account_merges where realm_id = $1', [s.realm.id]);
    assert.deepEqual(
      [record?.target_user_id, record?.source_user_id, record?.reason],
      [alice.id, federated, 'same person, two accounts'],
    );
    const [up] = await rows(s.h, 'select user_id from upstream_tokens where realm_id = $1', [s.realm.id]);
    assert.equal(up?.user_id, alice.id, 'the kept upstream tokens follow the link');
    const self = await s.admin.call('POST', `/users/${alice.id}/merges`, {
      source_user_id: s.admin.userId,
      reason: 'me',
    });
    assert.equal(self.status, 403, 'an administrator never merges their own account away');
  });
});
