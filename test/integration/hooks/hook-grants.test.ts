// before_token_issuance in the grants that issue only an access token or go through the device
// (docs/hooks.md): client_credentials (the hot path: a realm without token hooks sends no statement
// for them), token exchange, and an opaque access token, whose introspection shows the hook's claims.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { apiCaller } from '../../harness/api-kit.ts';
import { movableClock, signinSetup } from '../../harness/signin-kit.ts';
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
