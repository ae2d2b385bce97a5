// before_token_issuance in the grants that issue only an access token or go through the device
// (docs/hooks.md): client_credentials (the hot path: a realm without token hooks sends no statement
// for them), token exchange, and an opaque access token, whose introspection shows the hook's claims.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { apiCaller } from '../../harness/api-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { movableClock, PASSWORD, signinSetup } from '../../harness/signin-kit.ts';
import { countingDb } from '../../harness/statement-counter.ts';
import { fileDatabase } from '../../harness/test-db.ts';
import {
  codeFlow,
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';
import { startReceiver } from '../webhooks/webhook-kit.ts';
import {
  answerWith,
  createHook,
  hookCalls,
  hookSetup,
  type Json,
  receiverUrl,
  startDeadServer,
} from './hooks-kit.ts';

const ORDERS = 'https://orders.example.com';
const INVENTORY = 'https://inventory.example.com';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';

test('case=client_credentials: no statement for hooks until the realm has a token hook, then its claims and what it is told', async (t) => {
  const counting = countingDb(await fileDatabase());
  const { h, realm } = await signinSetup(t, {
    db: counting.db,
    clock: movableClock(),
    overrides: { 'delivery.egress_allowlist': '127.0.0.1/32' },
    user: null,
  });
  const admin = await apiCaller(h, realm);
  const receiver = await startReceiver(t);
  const svc = await seedServiceClient(h, realm, 'billing');
  const orders = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(h, realm, svc.client, orders, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const token = async () => {
    const r = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'client_credentials', resource: ORDERS },
      svc.creds,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r;
  };
  const statements = async () => {
    counting.log.take();
    const r = await token();
    return { r, sql: counting.log.take() };
  };
  await token();
  const plain = await statements();
  // The kept copy is proved current by one statement, and nothing else is sent.
  assert.equal(plain.sql.length, 1, plain.sql.join('\n'));
  assert.match(plain.sql[0] ?? '', /clients_revision/);

  // A hook of another kind leaves the path as it was.
  await createHook(admin, { kind: 'after_sign_in', url: receiverUrl(receiver), client_ids: [] });
  await token(); // the realm's row, read again after the change
  const other = await statements();
  assert.deepEqual(other.sql, plain.sql);

  const hook = await createHook(admin, {
    kind: 'before_token_issuance',
    url: receiverUrl(receiver),
    client_ids: ['billing'],
  });
  answerWith(receiver, { access_token: { tenant: 'acme', sub: 'usr_evil' }, id_token: { plan: 'gold' } });
  const hooked = await statements();
  assert.ok(hooked.sql.some((q) => q.includes('from hooks')));
  const claims = decodeJwt(hooked.r.body.access_token);
  assert.equal(claims.tenant, 'acme');
  assert.equal(claims.sub, svc.principalId);
  assert.equal(claims.plan, undefined);
  const sent = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as { hook_id: string; data: Json };
  assert.equal(sent.hook_id, hook.id);
  assert.deepEqual(sent.data, {
    client_id: 'billing',
    grant_type: 'client_credentials',
    user_id: null,
    service_principal_id: svc.principalId,
    scopes: ['orders:read'],
    org_id: null,
  });
});

test('case=client_credentials: a dead fail_closed hook refuses with temporarily_unavailable', async (t) => {
  const s = await hookSetup(t);
  const dead = await startDeadServer(t);
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const orders = await seedResource(s.h, s.realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(s.h, s.realm, svc.client, orders, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  await createHook(s.admin, {
    kind: 'before_token_issuance',
    url: dead.url,
    timeout_ms: 200,
    failure_mode: 'fail_closed',
    client_ids: ['billing'],
  });
  const form = { grant_type: 'client_credentials', resource: ORDERS };
  const refused = await oauthPost(s.h, s.realm, 'token', form, svc.creds);
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.equal(refused.body.error, 'temporarily_unavailable');
  assert.equal(refused.body.access_token, undefined);
  assert.equal(await hookCalls(s, 'before_token_issuance', 'timeout'), 1);
});

test('case=an opaque token carries the hook claims in its introspection; a token exchange asks the hook again', async (t) => {
  const s = await hookSetup(t);
  const orders = await seedResource(s.h, s.realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    tokenFormat: 'opaque',
  });
  await seedGrant(s.h, s.realm, s.client, orders, { scopes: ['orders:read'] });
  const inventory = await seedResource(s.h, s.realm, { audience: INVENTORY, scopes: ['stock:read'] });
  const ordersApi = await seedServiceClient(s.h, s.realm, 'orders-api', [EXCHANGE]);
  await registerIntrospector(s.h, s.realm, orders, ordersApi.client);
  await seedGrant(s.h, s.realm, ordersApi.client, inventory, {
    scopes: ['stock:read'],
    exchange: { acceptFrom: [ORDERS], maxScopes: ['stock:read'] },
  });
  await createHook(s.admin, { kind: 'before_token_issuance', url: receiverUrl(s.receiver), client_ids: [] });
  answerWith(s.receiver, {
    access_token: { tenant: 'acme', iss: 'https://evil.example', active: false, token_type: 'none' },
  });
  const tokens = await codeFlow(s.h, s.realm, s.creds, {
    start: { scope: 'openid orders:read', resource: [ORDERS] },
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const opaque = String(tokens.body.access_token);
  assert.match(opaque, /^pa_at_/);

  const seen = await oauthPost(s.h, s.realm, 'introspect', { token: opaque }, ordersApi.creds);
  assert.equal(seen.status, 200);
  assert.equal(seen.body.active, true);
  assert.equal(seen.body.tenant, 'acme');
  assert.equal(seen.body.token_type, 'Bearer');
  assert.equal(seen.body.iss, `${s.h.ctx.config.server.publicOrigin}/realms/${s.realm.name}`);
  assert.equal(seen.body.sub, s.user.id);

  answerWith(s.receiver, { access_token: { tenant: 'acme-exchanged' } });
  const ex = await oauthPost(
    s.h,
    s.realm,
    'token',
    {
      grant_type: EXCHANGE,
      subject_token: opaque,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: INVENTORY,
      scope: 'stock:read',
    },
    ordersApi.creds,
  );
  assert.equal(ex.status, 200, JSON.stringify(ex.body));
  const c = decodeJwt(ex.body.access_token);
  assert.equal(c.tenant, 'acme-exchanged');
  assert.equal(c.sub, s.user.id);
  const sent = JSON.parse(s.receiver.received.at(-1)?.body ?? '{}') as { data: Json };
  assert.deepEqual(sent.data, {
    client_id: 'orders-api',
    grant_type: EXCHANGE,
    user_id: s.user.id,
    scopes: ['stock:read'],
    org_id: null,
  });
});

test('case=device code: a poll while pending calls nothing; the approved code gets the hook claims', async (t) => {
  const s = await signinSetup(t, {
    overrides: {
      'delivery.egress_allowlist': '127.0.0.1/32',
      'security.min_auth_response': '0s',
      'ui.enabled': true,
    },
  });
  const admin = await apiCaller(s.h, s.realm);
  const receiver = await startReceiver(t);
  await s.h.createClient(s.realm, {
    clientId: 'tv-app',
    name: 'Living Room TV',
    type: 'device',
    redirectUris: [],
    grantTypes: [DEVICE_CODE],
    tokenEndpointAuthMethod: 'none',
    consentMode: 'implicit',
  });
  await createHook(admin, {
    kind: 'before_token_issuance',
    url: receiverUrl(receiver),
    client_ids: ['tv-app'],
  });
  answerWith(receiver, { access_token: { tenant: 'living-room' }, id_token: { plan: 'tv' } });
  const codes = await oauthPost(s.h, s.realm, 'device_authorization', {
    client_id: 'tv-app',
    scope: 'openid',
  });
  assert.equal(codes.status, 200, JSON.stringify(codes.body));
  const poll = () =>
    oauthPost(s.h, s.realm, 'token', {
      grant_type: DEVICE_CODE,
      device_code: String(codes.body.device_code),
      client_id: 'tv-app',
    });
  const pending = await poll();
  assert.equal(pending.body.error, 'authorization_pending');
  assert.equal(receiver.received.length, 0, 'a pending code calls no hook');

  // The person enters the code at the login UI's device page (the headless start with intent device).
  const base = `/api/v1/realms/${s.realm.name}/auth/transactions`;
  const post = async (path: string, body: unknown, token?: string) =>
    json(
      await s.h.get(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { 'x-transaction-token': token } : {}) },
        body: JSON.stringify(body),
      }),
    );
  const start = await post(base, {
    client_id: 'account',
    intent: 'device',
    device_user_code: String(codes.body.user_code),
  });
  assert.equal(start.status, 201, JSON.stringify(start.body));
  const at = `${base}/${start.body.transaction_id}`;
  const token = String(start.body.continuation_token);
  assert.equal((await post(`${at}/identify`, { identifier: 'alice@example.com' }, token)).status, 200);
  const done = await post(`${at}/password`, { password: PASSWORD }, token);
  assert.equal(done.status, 200, JSON.stringify(done.body));

  s.h.clock.advance(10_000);
  const issued = await poll();
  assert.equal(issued.status, 200, JSON.stringify(issued.body));
  assert.equal(decodeJwt(String(issued.body.access_token)).tenant, 'living-room');
  assert.equal(decodeJwt(String(issued.body.id_token)).plan, 'tv');
  const sent = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as { data: Json };
  assert.equal(sent.data.grant_type, DEVICE_CODE);
  assert.equal(sent.data.user_id, s.user.id);
});
