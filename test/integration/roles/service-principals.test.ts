// Service principals through the administration API: standalone principals, those behind service
// clients, state changes with their event, and what a disabled principal's tokens are worth.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedOrganization } from '../../harness/org-kit.ts';
import { audits, events } from '../../harness/signin-kit.ts';
import { oauthPost, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';
import { type Body, bareCaller, send, setup } from './roles-kit.ts';

const ORDERS = 'https://orders.example.com';

describe('service principals', () => {
  test('case=creates a principal without a client; lists it beside those of service clients', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const org = await seedOrganization(h, realm);
    const created = await api('POST', '/service-principals', {
      name: 'Nightly export',
      description: 'Exports reports',
      owner_user_id: admin.userId,
      owner_organization_id: org,
      allowed_organization_ids: [org],
      is_agent: true,
    });
    assert.equal(created.status, 201);
    assert.match(created.body.id, /^spr_[0-9a-z]{26}$/);
    assert.deepEqual(
      { ...created.body, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        name: 'Nightly export',
        description: 'Exports reports',
        owner_user_id: admin.userId,
        owner_organization_id: org,
        state: 'active',
        allowed_organization_ids: [org],
        is_agent: true,
        client_id: null,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    const svc = await seedServiceClient(h, realm, 'billing');
    const list = await api('GET', '/service-principals');
    const byId = Object.fromEntries(list.body.items.map((p: Body) => [p.id, p]));
    assert.deepEqual([byId[svc.principalId].client_id, byId[svc.principalId].name], ['billing', 'billing']);
    assert.ok(byId[created.body.id]);

    const bad = await api('POST', '/service-principals', {
      name: 'x',
      allowed_organization_ids: [org, 'org_missing'],
    });
    assert.deepEqual([bad.status, bad.body.errors[0].field], [422, 'allowed_organization_ids[1]']);
    assert.equal(
      (await api('POST', '/service-principals', { name: 'x', owner_user_id: 'usr_missing' })).status,
      422,
    );
    assert.equal((await api('POST', '/service-principals', { name: '' })).status, 422);
    assert.equal((await api('POST', '/service-principals', { name: 'x', state: 'active' })).status, 400);

    const patched = await api('PATCH', `/service-principals/${created.body.id}`, {
      allowed_organization_ids: null,
      is_agent: false,
      description: null,
    });
    assert.deepEqual(
      [
        patched.body.allowed_organization_ids,
        patched.body.is_agent,
        patched.body.description,
        patched.body.name,
      ],
      [null, false, null, 'Nightly export'],
    );
    assert.equal((await audits(h, realm, 'service_principal.updated')).length, 1);
  });

  test('case=disable ends the client_credentials token at introspection; enable restores it', async (t) => {
    const { h, realm, api } = await setup(t);
    const orders = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
    const svc = await seedServiceClient(h, realm, 'billing');
    await seedGrant(h, realm, svc.client, orders, {
      scopes: ['orders:read'],
      subjectTypes: ['service_principal'],
    });
    const introspector = await seedServiceClient(h, realm, 'orders-api');
    await h.ctx.db.query(
      'insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at) values ($1, $2, $3, now())',
      [realm.id, orders, introspector.client.id],
    );
    const cc = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'client_credentials', resource: ORDERS },
      svc.creds,
    );
    assert.equal(cc.status, 200, JSON.stringify(cc.body));
    const introspect = async () =>
      (await oauthPost(h, realm, 'introspect', { token: cc.body.access_token }, introspector.creds)).body
        .active;
    assert.equal(await introspect(), true);

    const disabled = await api('POST', `/service-principals/${svc.principalId}/disable`);
    assert.equal(disabled.status, 200);
    assert.equal(disabled.body.state, 'disabled');
    assert.equal(await introspect(), false);
    const again = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'client_credentials', resource: ORDERS },
      svc.creds,
    );
    assert.equal(again.body.error, 'unauthorized_client');
    assert.equal((await api('POST', `/service-principals/${svc.principalId}/disable`)).status, 409);

    assert.equal((await api('POST', `/service-principals/${svc.principalId}/enable`)).body.state, 'active');
    assert.equal(await introspect(), true);
    const changes = (await events(h, realm, 'service_principal.state_changed')).map((e) => [
      e.data,
      e.org_id,
    ]);
    assert.deepEqual(changes, [
      [{ service_principal_id: svc.principalId, state: 'disabled' }, null],
      [{ service_principal_id: svc.principalId, state: 'active' }, null],
    ]);
    // A client's principal goes with its client.
    assert.equal((await api('DELETE', `/service-principals/${svc.principalId}`)).status, 409);
  });

  test('case=deleting a standalone principal hides it and announces the state', async (t) => {
    const { h, realm, api } = await setup(t);
    const id = (await api('POST', '/service-principals', { name: 'temp' })).body.id;
    const group = (await api('POST', '/groups', { name: 'bots' })).body.id;
    await api('PUT', `/groups/${group}/members/service_principal/${id}`);
    assert.equal((await api('DELETE', `/service-principals/${id}`)).status, 204);
    assert.equal((await api('GET', `/service-principals/${id}`)).status, 404);
    assert.equal((await api('DELETE', `/service-principals/${id}`)).status, 404);
    assert.ok(!(await api('GET', '/service-principals')).body.items.some((p: Body) => p.id === id));
    assert.equal((await api('GET', `/groups/${group}`)).body.member_count, 0);
    const [e] = await events(h, realm, 'service_principal.state_changed');
    assert.deepEqual(e?.data, { service_principal_id: id, state: 'deleted' });
  });

  test('case=every route needs its permission', async (t) => {
    const { h, realm, api } = await setup(t);
    const id = (await api('POST', '/service-principals', { name: 'p' })).body.id;
    const nobody = await bareCaller(h, realm);
    assert.equal((await send(nobody, 'GET', '/service-principals')).status, 403);
    assert.equal((await send(nobody, 'GET', `/service-principals/${id}`)).status, 403);
    assert.equal((await send(nobody, 'POST', '/service-principals', { name: 'x' })).status, 403);
    assert.equal((await send(nobody, 'PATCH', `/service-principals/${id}`, { name: 'x' })).status, 403);
    assert.equal((await send(nobody, 'POST', `/service-principals/${id}/disable`)).status, 403);
    assert.equal((await send(nobody, 'DELETE', `/service-principals/${id}`)).status, 403);
  });
});
