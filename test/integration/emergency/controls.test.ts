// POST /emergency/controls (spec doc 2, "Keys and emergency controls"; docs/emergency.md): each
// target type's action takes effect on the paths that serve it, and every control is audited in
// category emergency with the emergency_action signal.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { s256Challenge } from '../../../src/kernel/pkce.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { seedOrganization } from '../../harness/org-kit.ts';
import { json as jsonOf, newVerifier, startBody } from '../../harness/signin-driver.ts';
import { audits, events, REDIRECT, rows } from '../../harness/signin-kit.ts';
import { serviceTokenSeed } from '../../harness/token-kit.ts';
import {
  deliver,
  deliveriesOf,
  dispatch,
  emit,
  type Json,
  json,
  setup,
  subscribe,
} from '../webhooks/webhook-kit.ts';

const ORDERS = 'https://orders.example.com';

async function withTokens(t: Parameters<typeof setup>[0]) {
  const s = await setup(t);
  const { h, realm, admin } = s;
  const { svc, token, active } = await serviceTokenSeed(h, realm, ORDERS);
  const control = async (body: Json) => {
    const res = await admin.call('POST', '/emergency/controls', { reason: 'incident 4711', ...body });
    return { status: res.status, body: await json(res) };
  };
  return { ...s, svc, token, active, control };
}

describe('emergency › controls', () => {
  test('case=a disabled client gets no tokens and its tokens die; enabling restores it', async (t) => {
    const { h, realm, token, active, control } = await withTokens(t);
    const before = await token();
    assert.equal(before.status, 200);

    const r = await control({ target_type: 'client', target_id: 'billing', action: 'disable' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      target_type: 'client',
      target_id: 'billing',
      action: 'disable',
      state: 'disabled',
      changed: true,
    });
    assert.equal((await token()).status, 401, 'a disabled client cannot get tokens');
    assert.equal(await active(before.body.access_token), false, 'its tokens are inactive');

    const [applied] = await audits(h, realm, 'emergency.control.applied');
    assert.equal(applied?.category, 'emergency');
    assert.equal(applied?.signal, 'emergency_action');
    assert.equal(applied?.reason, 'incident 4711');
    assert.equal(applied?.target_type, 'client');
    assert.equal(applied?.target_id, 'billing');
    const alerts = (await events(h, realm, 'security.alert')).filter(
      (e) => e.data.signal === 'emergency_action',
    );
    assert.equal(alerts.length, 1);
    assert.equal(alerts[0]?.data.audit_event_id, applied?.id);
    assert.deepEqual((await events(h, realm, 'client.state_changed')).at(-1)?.data, {
      client_ref: 'billing',
      state: 'suspended',
    });

    // Again: nothing changes, and the decision is still on record.
    const again = await control({ target_type: 'client', target_id: 'billing', action: 'disable' });
    assert.equal(again.body.changed, false);
    assert.equal((await audits(h, realm, 'emergency.control.applied')).length, 2);
    assert.equal((await events(h, realm, 'client.state_changed')).length, 1);

    assert.equal(
      (await control({ target_type: 'client', target_id: 'billing', action: 'enable' })).status,
      200,
    );
    assert.equal((await token()).status, 200);
  });

  test('case=a disabled grant type is refused at the token endpoint of that realm only', async (t) => {
    const { h, realm, token, control } = await withTokens(t);
    const r = await control({
      target_type: 'grant_type',
      target_id: 'client_credentials',
      action: 'disable',
    });
    assert.deepEqual([r.status, r.body.state, r.body.changed], [200, 'disabled', true]);
    const refused = await token();
    assert.deepEqual([refused.status, refused.body.error], [400, 'unsupported_grant_type']);

    // Another realm of the same server still issues.
    const other = await h.createRealm();
    const elsewhere = await (await serviceTokenSeed(h, other, ORDERS)).token();
    assert.equal(elsewhere.status, 200);

    assert.equal(
      (await control({ target_type: 'grant_type', target_id: 'client_credentials', action: 'enable' }))
        .status,
      200,
    );
    assert.equal((await token()).status, 200);
    const unknown = await control({ target_type: 'grant_type', target_id: 'password', action: 'disable' });
    assert.equal(unknown.status, 422);
    assert.equal(
      (await rows(h, 'select * from emergency_controls where realm_id = $1', [realm.id])).length,
      0,
      'a refused control writes nothing',
    );
  });

  test('case=a disabled authorization code flow refuses new sign-ins in that realm', async (t) => {
    const { h, realm, control } = await withTokens(t);
    await h.createClient(realm, {
      clientId: 'web-app',
      name: 'Web App',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    const start = async () =>
      jsonOf(
        await h.get(`/api/v1/realms/${realm.name}/auth/transactions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(startBody('web-app', REDIRECT, newVerifier())),
        }),
      );
    assert.equal((await start()).status, 201);
    await control({ target_type: 'grant_type', target_id: 'authorization_code', action: 'disable' });
    const refused = await start();
    assert.deepEqual([refused.status, refused.body.error], [400, 'unsupported_response_type']);
    const browser = await h.get(
      `/realms/${realm.name}/oauth/authorize?${new URLSearchParams({
        client_id: 'web-app',
        redirect_uri: REDIRECT,
        response_type: 'code',
        code_challenge: s256Challenge(newVerifier()),
        code_challenge_method: 'S256',
        state: 'st-1',
      })}`,
      { redirect: 'manual' },
    );
    assert.equal(browser.status, 303);
    const back = new URL(browser.headers.get('location') ?? '');
    assert.deepEqual(
      [back.origin + back.pathname, back.searchParams.get('error'), back.searchParams.get('state')],
      [REDIRECT, 'unsupported_response_type', 'st-1'],
    );
    await control({ target_type: 'grant_type', target_id: 'authorization_code', action: 'enable' });
    assert.equal((await start()).status, 201);
  });

  test('case=a disabled service principal holds no live tokens and gets none', async (t) => {
    const { svc, token, active, control } = await withTokens(t);
    const before = await token();
    const r = await control({
      target_type: 'service_principal',
      target_id: svc.principalId,
      action: 'disable',
    });
    assert.deepEqual([r.status, r.body.state], [200, 'disabled']);
    assert.equal(await active(before.body.access_token), false);
    assert.notEqual((await token()).status, 200);
    await control({ target_type: 'service_principal', target_id: svc.principalId, action: 'enable' });
    assert.equal((await token()).status, 200);
  });

  test('case=a disabled organization is suspended and an enabled one reactivated', async (t) => {
    const { h, realm, control } = await withTokens(t);
    const org = await seedOrganization(h, realm);
    const r = await control({ target_type: 'organization', target_id: org, action: 'disable' });
    assert.deepEqual([r.status, r.body.state], [200, 'suspended']);
    const [row] = await rows(h, 'select state from organizations where realm_id = $1 and id = $2', [
      realm.id,
      org,
    ]);
    assert.equal(row?.state, 'suspended');
    assert.equal((await events(h, realm, 'organization.suspended')).length, 1);
    await control({ target_type: 'organization', target_id: org, action: 'enable' });
    assert.equal((await events(h, realm, 'organization.reactivated')).length, 1);
  });

  test('case=a paused webhook stops deliveries; enabling lets queued ones go', async (t) => {
    const s = await withTokens(t);
    const sub = await subscribe(s);
    await emit(s, 'user.created', { user_id: 'usr_one', created_via: 'admin' });
    await dispatch(s);
    const r = await s.control({ target_type: 'webhook', target_id: sub.id as string, action: 'pause' });
    assert.deepEqual([r.status, r.body.state], [200, 'paused']);
    await deliver(s);
    assert.equal(s.receiver.received.length, 0, 'nothing is delivered while paused');
    await emit(s, 'user.created', { user_id: 'usr_two', created_via: 'admin' });
    await dispatch(s);
    assert.equal((await deliveriesOf(s, sub.id as string)).length, 1, 'nothing new is queued while paused');

    await s.control({ target_type: 'webhook', target_id: sub.id as string, action: 'enable' });
    // The postponed delivery is looked at again after its recheck delay.
    s.h.clock.advance(10 * 60_000);
    await deliver(s);
    assert.equal(s.receiver.received.length, 1);
  });

  test('case=unknown targets, unsupported actions and missing permission change nothing', async (t) => {
    const { h, realm, control } = await withTokens(t);
    for (const [body, status] of [
      [{ target_type: 'identity_provider', target_id: 'idp_x', action: 'disable' }, 404],
      [{ target_type: 'hook', target_id: 'hok_x', action: 'disable' }, 404],
      [{ target_type: 'client', target_id: 'nobody', action: 'disable' }, 404],
      [{ target_type: 'client', target_id: 'billing', action: 'pause' }, 422],
      [{ target_type: 'realm', target_id: 'x', action: 'disable' }, 422],
      [{ target_type: 'client', target_id: 'billing', action: 'disable', extra: 1 }, 400],
      [{ target_type: 'client', target_id: 'billing', action: 'disable', reason: 'x' }, 422],
    ] as const) {
      assert.equal((await control(body)).status, status, JSON.stringify(body));
    }
    const reader = await apiCaller(h, realm, { roles: ['resource-server'] });
    const denied = await reader.call('POST', '/emergency/controls', {
      target_type: 'client',
      target_id: 'billing',
      action: 'disable',
      reason: 'not mine to decide',
    });
    assert.equal(denied.status, 403);
    assert.equal((await audits(h, realm, 'emergency.control.applied')).length, 0);
    const [client] = await rows(
      h,
      `select state from clients where realm_id = $1 and client_id = 'billing'`,
      [realm.id],
    );
    assert.equal(client?.state, 'active');
  });
});
