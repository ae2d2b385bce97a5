// Client authentication with secrets and as a public client, against the test database: every
// way to fail answers the same invalid_client, and a root key rotation keeps secrets working.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { OPERATOR_ACTOR } from '../../../src/audit/audit.types.ts';
import { authenticateClient } from '../../../src/clients/client-auth.ts';
import {
  issueClientSecret,
  listActiveSecrets,
  revokeClientSecret,
} from '../../../src/clients/client-secrets.ts';
import type { ClientRow, NewClient } from '../../../src/clients/clients.repo.ts';
import { OAuthError, oauthErrorBody } from '../../../src/kernel/oauth-error.ts';
import { RootKeyring } from '../../../src/platform/crypto/keyring.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { startHarness, TEST_ROOT_KEY } from '../../harness/harness.ts';

const actor = OPERATOR_ACTOR;
const MINUTE = 60_000;
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

interface Call {
  authorization?: string;
  form?: Record<string, string>;
  now?: Date;
  keyring?: RootKeyring;
}

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const add = (c: Partial<NewClient> & { clientId: string }) =>
    h.createClient(realm, {
      name: c.clientId,
      type: 'web',
      redirectUris: ['https://app.example.com/cb'],
      ...c,
    });
  const clients = {
    basic: await add({ clientId: 'basic-app', tokenEndpointAuthMethod: 'client_secret_basic' }),
    post: await add({ clientId: 'post-app', tokenEndpointAuthMethod: 'client_secret_post' }),
    spa: await add({ clientId: 'spa', type: 'spa', tokenEndpointAuthMethod: 'none' }),
    jwt: await add({ clientId: 'jwt-app', tokenEndpointAuthMethod: 'private_key_jwt' }),
  };
  const auth = (c: Call) =>
    authenticateClient(
      h.ctx.db,
      c.keyring ?? h.ctx.keyring!,
      realm.id,
      { authorization: c.authorization, form: new URLSearchParams(c.form ?? {}) },
      {
        now: c.now ?? new Date(),
        maxTokenBytes: h.ctx.config.limits.maxTokenBytes,
        challengeRealm: realm.name,
        assertionAudiences: [`${h.publicUrl}/realms/${realm.name}`],
        clockSkewSeconds: 60,
      },
    );
  const issue = (client: ClientRow, opts: { now?: Date; expiresAt?: Date; keyring?: RootKeyring } = {}) =>
    h.ctx.db.tx((tx) =>
      issueClientSecret(tx, opts.keyring ?? h.ctx.keyring!, realm.id, client.id, opts.now ?? new Date(), {
        actor,
        ...(opts.expiresAt ? { expiresAt: opts.expiresAt } : {}),
      }),
    );
  return { h, realm, clients, auth, issue };
}

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (e instanceof OAuthError)
      return { status: e.status, body: oauthErrorBody(e), headers: e.headers, debug: e.debug };
    throw e;
  }
  assert.fail('expected an OAuthError');
}

const challengeFor = (realm: RealmRow) => ({
  'www-authenticate': `Basic realm="${realm.name}", charset="UTF-8"`,
});
const INVALID_CLIENT = { error: 'invalid_client', error_description: 'client authentication failed' };

describe('clients › authentication with secrets', () => {
  test('case=client_secret_basic and client_secret_post with the right secret', async (t) => {
    const { clients, auth, issue } = await setup(t);
    const b = await issue(clients.basic);
    const p = await issue(clients.post);
    const viaBasic = await auth({
      authorization: basic('basic-app', b.secret),
      form: { grant_type: 'client_credentials' },
    });
    assert.deepEqual(
      [viaBasic.method, viaBasic.secretId, viaBasic.client.id],
      ['client_secret_basic', b.id, clients.basic.id],
    );
    const viaPost = await auth({ form: { client_id: 'post-app', client_secret: p.secret } });
    assert.deepEqual(
      [viaPost.method, viaPost.secretId, viaPost.client.client_id],
      ['client_secret_post', p.id, 'post-app'],
    );
  });

  test('case=any of the active secrets works, so a rotation has no gap', async (t) => {
    const { h, realm, clients, auth, issue } = await setup(t);
    const old = await issue(clients.basic);
    const renewed = await issue(clients.basic);
    assert.equal((await auth({ authorization: basic('basic-app', old.secret) })).secretId, old.id);
    assert.equal((await auth({ authorization: basic('basic-app', renewed.secret) })).secretId, renewed.id);
    await h.ctx.db.tx((tx) =>
      revokeClientSecret(tx, realm.id, clients.basic.id, old.id, new Date(), { actor }),
    );
    assert.equal(
      (await refusal(auth({ authorization: basic('basic-app', old.secret) }))).debug,
      'secret_mismatch',
    );
    assert.equal((await auth({ authorization: basic('basic-app', renewed.secret) })).secretId, renewed.id);
  });

  test('case=wrong, revoked, expired and another client’s secrets all fail the same way', async (t) => {
    const { h, realm, clients, auth, issue } = await setup(t);
    const now = new Date();
    const good = await issue(clients.basic);
    const expiring = await issue(clients.basic, { expiresAt: new Date(now.getTime() + MINUTE) });
    const revoked = await issue(clients.basic);
    await h.ctx.db.tx((tx) => revokeClientSecret(tx, realm.id, clients.basic.id, revoked.id, now, { actor }));
    const otherClient = await issue(clients.post);
    // A secret of the right shape for the wrong client, even when that client also uses Basic.
    const sibling = await h.createClient(realm, {
      clientId: 'sibling',
      name: 'sibling',
      type: 'web',
      redirectUris: ['https://app.example.com/cb'],
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    const siblingSecret = await issue(sibling);

    const later = new Date(now.getTime() + 2 * MINUTE);
    assert.equal(
      (await auth({ authorization: basic('basic-app', expiring.secret), now })).secretId,
      expiring.id,
    );
    const attempts: [string, string, Date][] = [
      ['wrong', `${good.secret.slice(0, -1)}${good.secret.endsWith('A') ? 'B' : 'A'}`, now],
      ['revoked', revoked.secret, now],
      ['expired', expiring.secret, later],
      ['another client (post)', otherClient.secret, now],
      ['another client (basic)', siblingSecret.secret, now],
      ['empty-ish', ' ', now],
    ];
    for (const [name, secret, at] of attempts) {
      const r = await refusal(auth({ authorization: basic('basic-app', secret), now: at }));
      assert.deepEqual([r.status, r.body, r.headers], [401, INVALID_CLIENT, challengeFor(realm)], name);
    }
    assert.equal(
      (await auth({ authorization: basic('basic-app', good.secret), now: later })).secretId,
      good.id,
    );
  });

  test('case=unknown client and wrong secret are indistinguishable for both methods', async (t) => {
    const { realm, clients, auth, issue } = await setup(t);
    const b = await issue(clients.basic);
    const p = await issue(clients.post);
    const unknownBasic = await refusal(auth({ authorization: basic('no-such-app', b.secret) }));
    const wrongBasic = await refusal(auth({ authorization: basic('basic-app', p.secret) }));
    assert.deepEqual(
      [unknownBasic.status, unknownBasic.body, unknownBasic.headers],
      [wrongBasic.status, wrongBasic.body, wrongBasic.headers],
    );
    assert.deepEqual(unknownBasic.headers, challengeFor(realm));
    assert.deepEqual([unknownBasic.debug, wrongBasic.debug], ['unknown_client', 'secret_mismatch']);

    const unknownPost = await refusal(auth({ form: { client_id: 'no-such-app', client_secret: p.secret } }));
    const wrongPost = await refusal(auth({ form: { client_id: 'post-app', client_secret: b.secret } }));
    assert.deepEqual(
      [unknownPost.status, unknownPost.body, unknownPost.headers],
      [wrongPost.status, wrongPost.body, wrongPost.headers],
    );
    assert.deepEqual([unknownPost.status, unknownPost.body, unknownPost.headers], [401, INVALID_CLIENT, {}]);
  });

  test('case=a secret client accepts its secret by either secret method (decision D19)', async (t) => {
    const { clients, auth, issue } = await setup(t);
    const b = await issue(clients.basic);
    const p = await issue(clients.post);
    const viaPost = await auth({ form: { client_id: 'basic-app', client_secret: b.secret } });
    assert.deepEqual(
      [viaPost.method, viaPost.secretId, viaPost.client.token_endpoint_auth_method],
      ['client_secret_post', b.id, 'client_secret_basic'],
    );
    const viaBasic = await auth({ authorization: basic('post-app', p.secret) });
    assert.deepEqual(
      [viaBasic.method, viaBasic.secretId, viaBasic.client.token_endpoint_auth_method],
      ['client_secret_basic', p.id, 'client_secret_post'],
    );
    // The other method does not relax the secret check.
    const wrong = await refusal(auth({ form: { client_id: 'basic-app', client_secret: p.secret } }));
    assert.deepEqual([wrong.status, wrong.body, wrong.debug], [401, INVALID_CLIENT, 'secret_mismatch']);
  });

  test('case=none and private_key_jwt stay exact, even with the right secret', async (t) => {
    const { clients, auth, issue } = await setup(t);
    const b = await issue(clients.basic);
    const cases: [string, Call][] = [
      ['basic client as public', { form: { client_id: 'basic-app' } }],
      ['post client as public', { form: { client_id: 'post-app' } }],
      ['public client with a secret', { form: { client_id: 'spa', client_secret: b.secret } }],
      ['public client with Basic', { authorization: basic('spa', b.secret) }],
      ['private_key_jwt client via post', { form: { client_id: 'jwt-app', client_secret: b.secret } }],
      ['private_key_jwt client via basic', { authorization: basic('jwt-app', b.secret) }],
      ['private_key_jwt client as public', { form: { client_id: 'jwt-app' } }],
    ];
    for (const [name, call] of cases) {
      const r = await refusal(auth(call));
      assert.deepEqual([r.status, r.body, r.debug], [401, INVALID_CLIENT, 'method_mismatch'], name);
    }
  });

  test('case=a disabled client fails, with any credential', async (t) => {
    const { h, realm, clients, auth, issue } = await setup(t);
    const b = await issue(clients.basic);
    await h.ctx.db.query(`update clients set state = 'disabled' where realm_id = $1 and id in ($2, $3)`, [
      realm.id,
      clients.basic.id,
      clients.spa.id,
    ]);
    const r = await refusal(auth({ authorization: basic('basic-app', b.secret) }));
    assert.deepEqual([r.status, r.body, r.debug], [401, INVALID_CLIENT, 'client_disabled']);
    const spa = await refusal(auth({ form: { client_id: 'spa' } }));
    assert.deepEqual([spa.status, spa.debug], [401, 'client_disabled']);
  });

  test('case=public clients present only their client_id', async (t) => {
    const { auth } = await setup(t);
    const ok = await auth({ form: { client_id: 'spa', code: 'x' } });
    assert.deepEqual([ok.method, ok.client.client_id, ok.secretId], ['none', 'spa', null]);
    const unknown = await refusal(auth({ form: { client_id: 'nobody' } }));
    assert.deepEqual([unknown.status, unknown.body, unknown.headers], [401, INVALID_CLIENT, {}]);
  });

  test('case=two credentials at once are invalid_request, before any look-up', async (t) => {
    const { clients, auth, issue } = await setup(t);
    const b = await issue(clients.basic);
    const r = await refusal(
      auth({
        authorization: basic('basic-app', b.secret),
        form: { client_id: 'basic-app', client_secret: b.secret },
      }),
    );
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid_request');
  });

  test('case=an oversized Basic header is refused like a bad credential', async (t) => {
    const { h, realm, auth } = await setup(t);
    const r = await refusal(
      auth({ authorization: basic('basic-app', 'x'.repeat(h.ctx.config.limits.maxTokenBytes)) }),
    );
    assert.deepEqual(
      [r.status, r.body, r.headers, r.debug],
      [401, INVALID_CLIENT, challengeFor(realm), 'basic_oversized'],
    );
  });

  test('case=last use is recorded, at most once a minute', async (t) => {
    const { h, realm, clients, auth, issue } = await setup(t);
    const b = await issue(clients.basic);
    const t0 = new Date(Date.now() + MINUTE);
    const lastUsed = async () =>
      (await listActiveSecrets(h.ctx.db, realm.id, clients.basic.id, t0))[0]?.lastUsedAt?.getTime();
    await auth({ authorization: basic('basic-app', b.secret), now: t0 });
    assert.equal(await lastUsed(), t0.getTime());
    await auth({ authorization: basic('basic-app', b.secret), now: new Date(t0.getTime() + 30_000) });
    assert.equal(await lastUsed(), t0.getTime());
    const t1 = new Date(t0.getTime() + MINUTE);
    await auth({ authorization: basic('basic-app', b.secret), now: t1 });
    assert.equal(await lastUsed(), t1.getTime());
    // A failed attempt records nothing.
    await refusal(
      auth({ authorization: basic('basic-app', 'pa_cs_wrong'), now: new Date(t1.getTime() + 5 * MINUTE) }),
    );
    assert.equal(await lastUsed(), t1.getTime());
  });

  test('case=secrets keep verifying after a new root key version becomes active', async (t) => {
    const { clients, auth, issue } = await setup(t);
    const v1 = Buffer.from(TEST_ROOT_KEY, 'base64');
    const ring1 = RootKeyring.fromKeys(new Map([[1, v1]]), 1);
    const ring12 = RootKeyring.fromKeys(
      new Map([
        [1, v1],
        [2, randomBytes(32)],
      ]),
      2,
    );
    const old = await issue(clients.basic, { keyring: ring1 });
    const fresh = await issue(clients.basic, { keyring: ring12 });
    assert.equal(
      (await auth({ authorization: basic('basic-app', old.secret), keyring: ring12 })).secretId,
      old.id,
    );
    assert.equal(
      (await auth({ authorization: basic('basic-app', fresh.secret), keyring: ring12 })).secretId,
      fresh.id,
    );
    // A process that has not loaded version 2 yet still serves the old secret, not the new one.
    assert.equal(
      (await auth({ authorization: basic('basic-app', old.secret), keyring: ring1 })).secretId,
      old.id,
    );
    assert.equal(
      (await refusal(auth({ authorization: basic('basic-app', fresh.secret), keyring: ring1 }))).status,
      401,
    );
  });
});
