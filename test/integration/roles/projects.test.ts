// Projects through the administration API: fields, names per owner organization, states,
// organization administrators and permissions.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedMembership, seedOrganization, seedOrgRole } from '../../harness/org-kit.ts';
import { audits } from '../../harness/signin-kit.ts';
import { type Body, bareCaller, send, setup } from './roles-kit.ts';

describe('projects', () => {
  test('case=creates with the export fields; names are unique per owner organization', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const org = await seedOrganization(h, realm);
    const p = await api('POST', '/projects', {
      name: 'Apollo',
      description: 'Moon',
      environment: 'staging',
      owner_user_id: admin.userId,
      owner_organization_id: org,
    });
    assert.equal(p.status, 201);
    assert.match(p.body.id, /^prj_[0-9a-z]{26}$/);
    assert.deepEqual(
      { ...p.body, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        name: 'Apollo',
        description: 'Moon',
        environment: 'staging',
        state: 'active',
        owner_user_id: admin.userId,
        owner_organization_id: org,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.equal(
      (await api('POST', '/projects', { name: 'apollo', owner_organization_id: org })).status,
      409,
    );
    assert.equal((await api('POST', '/projects', { name: 'apollo' })).status, 201);
    assert.equal((await api('POST', '/projects', { name: 'x', environment: 'qa' })).status, 422);
    assert.equal(
      (await api('POST', '/projects', { name: 'x', owner_organization_id: 'org_missing' })).status,
      422,
    );
    assert.equal((await api('POST', '/projects', { name: 'x', owner_user_id: 'usr_missing' })).status, 422);
    assert.equal((await api('POST', '/projects', { name: 'x', state: 'archived' })).status, 400);
    const patched = await api('PATCH', `/projects/${p.body.id}`, {
      environment: 'production',
      description: null,
    });
    assert.deepEqual(
      [patched.body.environment, patched.body.description, patched.body.name],
      ['production', null, 'Apollo'],
    );
    assert.equal((await api('GET', `/projects?owner_organization_id=${org}`)).body.items.length, 1);
    assert.equal((await audits(h, realm, 'project.created')).length, 2);
  });

  test('case=suspend, reactivate and archive follow the state rules', async (t) => {
    const { api } = await setup(t);
    const id = (await api('POST', '/projects', { name: 'Gemini' })).body.id;
    assert.equal((await api('POST', `/projects/${id}/reactivate`)).status, 409);
    assert.equal((await api('POST', `/projects/${id}/suspend`)).body.state, 'suspended');
    assert.equal((await api('POST', `/projects/${id}/suspend`)).status, 409);
    assert.equal((await api('POST', `/projects/${id}/reactivate`)).body.state, 'active');
    assert.equal((await api('POST', `/projects/${id}/archive`)).body.state, 'archived');
    assert.equal((await api('POST', `/projects/${id}/reactivate`)).status, 409);
    assert.deepEqual(
      (await api('GET', '/projects?state=archived')).body.items.map((p: Body) => p.id),
      [id],
    );
    assert.equal((await api('POST', '/projects/prj_missing/archive')).status, 404);
  });

  test("case=organization administrators manage their organization's projects only", async (t) => {
    const { h, realm, api } = await setup(t);
    const orgA = await seedOrganization(h, realm);
    const orgB = await seedOrganization(h, realm);
    const alice = await bareCaller(h, realm);
    await seedMembership(h, realm, orgA, alice.userId);
    await seedOrgRole(h, realm, orgA, { type: 'user', id: alice.userId }, 'admin');
    const mine = await send(alice, 'POST', `/organizations/${orgA}/projects`, { name: 'Ours' });
    assert.equal(mine.status, 201);
    assert.equal(mine.body.owner_organization_id, orgA);
    const theirs = (await api('POST', '/projects', { name: 'Theirs', owner_organization_id: orgB })).body.id;
    assert.equal((await send(alice, 'GET', `/organizations/${orgA}/projects/${theirs}`)).status, 404);
    assert.equal(
      (await send(alice, 'POST', `/organizations/${orgA}/projects/${theirs}/suspend`)).status,
      404,
    );
    assert.equal((await send(alice, 'GET', `/organizations/${orgB}/projects`)).status, 404);
    assert.equal(
      (
        await send(alice, 'POST', `/organizations/${orgA}/projects`, {
          name: 'x',
          owner_organization_id: orgB,
        })
      ).status,
      422,
    );
    assert.deepEqual(
      (await send(alice, 'GET', `/organizations/${orgA}/projects`)).body.items.map((p: Body) => p.id),
      [mine.body.id],
    );
    assert.equal((await send(alice, 'GET', '/projects')).status, 403);
  });

  test('case=every route needs its permission', async (t) => {
    const { h, realm, api } = await setup(t);
    const id = (await api('POST', '/projects', { name: 'Gemini' })).body.id;
    const nobody = await bareCaller(h, realm);
    assert.equal((await send(nobody, 'GET', '/projects')).status, 403);
    assert.equal((await send(nobody, 'GET', `/projects/${id}`)).status, 403);
    assert.equal((await send(nobody, 'POST', '/projects', { name: 'x' })).status, 403);
    assert.equal((await send(nobody, 'PATCH', `/projects/${id}`, { name: 'x' })).status, 403);
    assert.equal((await send(nobody, 'POST', `/projects/${id}/archive`)).status, 403);
  });
});
