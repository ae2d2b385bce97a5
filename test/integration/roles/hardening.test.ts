// Regressions from the security review of the role model API: the delegation ceiling on group
// membership and group tree changes, 404 instead of 409/422 for objects of another organization,
// NUL in group metadata, and where an organization's service principal may act by default.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { seedOrganization } from '../../harness/org-kit.ts';
import { assign, bareCaller, createRole, orgAdmin, send, setup } from './roles-kit.ts';

const builtinId = async (h: Awaited<ReturnType<typeof setup>>['h'], realmId: string, name: string) => {
  const r = await findRoleByName(h.ctx.db, realmId, name);
  if (!r) throw new Error(`no role ${name}`);
  return r.id;
};

describe('roles hardening › delegation ceiling on groups', () => {
  test('case=an organization admin cannot join, nest under or move under a group holding owner', async (t) => {
    const { h, realm, api } = await setup(t);
    const org = await seedOrganization(h, realm);
    const { caller: alice, as } = await orgAdmin(h, realm, org);
    const base = `/organizations/${org}/groups`;

    const owners = (await api('POST', base, { name: 'owners' })).body.id;
    const held = await api('POST', `/organizations/${org}/role-assignments`, {
      role_id: await builtinId(h, realm.id, 'owner'),
      subject_type: 'group',
      subject_id: owners,
    });
    assert.equal(held.status, 201, JSON.stringify(held.body));

    const join = await as('PUT', `${base}/${owners}/members/user/${alice.userId}`);
    assert.equal(join.status, 403, JSON.stringify(join.body));
    const child = await as('POST', base, { name: 'sub', parent_id: owners });
    assert.equal(child.status, 403);
    const team = (await as('POST', base, { name: 'team' })).body.id;
    assert.equal((await as('PUT', `${base}/${team}/members/user/${alice.userId}`)).status, 204);
    const move = await as('PATCH', `${base}/${team}`, { parent_id: owners });
    assert.equal(move.status, 403);
    assert.equal((await api('GET', `${base}/${team}`)).body.parent_id, null);
    assert.equal(
      (await as('POST', `/organizations/${org}/ownership-transfers`, { user_id: alice.userId })).status,
      403,
    );
    // The realm administrator holds everything.
    assert.equal((await api('PUT', `${base}/${owners}/members/user/${alice.userId}`)).status, 204);
  });

  test('case=realm.groups.write alone does not let a caller join a group holding realm-admin', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const admins = (await api('POST', '/groups', { name: 'admins' })).body.id;
    assert.equal(
      (await assign(admin, await builtinId(h, realm.id, 'realm-admin'), { type: 'group', id: admins }))
        .status,
      201,
    );
    const writer = await createRole(admin, { name: 'group-writer', permissions: ['realm.groups.write'] });
    const gus = await bareCaller(h, realm);
    await assign(admin, writer, { type: 'user', id: gus.userId });
    const join = await send(gus, 'PUT', `/groups/${admins}/members/user/${gus.userId}`);
    assert.equal(join.status, 403, JSON.stringify(join.body));
    assert.equal((await send(gus, 'POST', '/groups', { name: 'under', parent_id: admins })).status, 403);
    // A group holding nothing beyond the caller's reach is fine.
    const plain = (await send(gus, 'POST', '/groups', { name: 'plain' })).body.id;
    assert.equal((await send(gus, 'PUT', `/groups/${plain}/members/user/${gus.userId}`)).status, 204);
    assert.equal((await send(gus, 'PATCH', `/groups/${plain}`, { parent_id: admins })).status, 403);
    assert.equal((await send(gus, 'GET', '/users')).status, 403);
  });

  test('case=a realm group holding an organization role needs the caller to hold it in that organization', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const org = await seedOrganization(h, realm);
    const g = (await api('POST', '/groups', { name: 'org-owners' })).body.id;
    const held = await assign(
      admin,
      await builtinId(h, realm.id, 'owner'),
      { type: 'group', id: g },
      {
        scope_type: 'organization',
        scope_id: org,
      },
    );
    assert.equal(held.status, 201, JSON.stringify(held.body));
    const writer = await createRole(admin, { name: 'group-writer', permissions: ['realm.groups.write'] });
    const gus = await bareCaller(h, realm);
    await assign(admin, writer, { type: 'user', id: gus.userId });
    assert.equal((await send(gus, 'PUT', `/groups/${g}/members/user/${gus.userId}`)).status, 403);
  });
});

describe('roles hardening › another organization’s objects are not found', () => {
  test('case=groups, roles and users of another organization answer 404 on an organization admin’s routes', async (t) => {
    const { h, realm, api } = await setup(t);
    const orgA = await seedOrganization(h, realm);
    const orgB = await seedOrganization(h, realm);
    const { caller: alice, as } = await orgAdmin(h, realm, orgA);
    const bGroup = (await api('POST', `/organizations/${orgB}/groups`, { name: 'b-team' })).body.id;
    const bRole = (await api('POST', `/organizations/${orgB}/roles`, { name: 'b-only' })).body.id;
    const member = await builtinId(h, realm.id, 'member');

    const groupSubject = await as('POST', `/organizations/${orgA}/role-assignments`, {
      role_id: member,
      subject_type: 'group',
      subject_id: bGroup,
    });
    assert.equal(groupSubject.status, 404, JSON.stringify(groupSubject.body));
    const foreignRole = await as('POST', '/role-assignments', {
      role_id: bRole,
      subject_type: 'user',
      subject_id: alice.userId,
      scope_type: 'organization',
      scope_id: orgA,
    });
    assert.equal(foreignRole.status, 404, JSON.stringify(foreignRole.body));
    const parent = await as('POST', `/organizations/${orgA}/groups`, { name: 'x', parent_id: bGroup });
    assert.equal(parent.status, 404);
    const team = (await as('POST', `/organizations/${orgA}/groups`, { name: 'team' })).body.id;
    assert.equal(
      (await as('PATCH', `/organizations/${orgA}/groups/${team}`, { parent_id: bGroup })).status,
      404,
    );
    const outsider = await h.createUser(realm, { email: 'outsider@example.com' });
    const put = await as('PUT', `/organizations/${orgA}/groups/${team}/members/user/${outsider.id}`);
    assert.equal(put.status, 404);

    // A realm administrator still learns the precise reason.
    const realmSide = await api('POST', '/role-assignments', {
      role_id: bRole,
      subject_type: 'user',
      subject_id: alice.userId,
      scope_type: 'organization',
      scope_id: orgA,
    });
    assert.equal(realmSide.status, 422);
  });
});

describe('roles hardening › NUL in group metadata', () => {
  test('case=a NUL in a metadata key or value is 422', async (t) => {
    const { api } = await setup(t);
    for (const metadata of [{ 'k\u0000': 1 }, { k: 'v\u0000' }, { k: [{ x: '\u0000' }] }]) {
      const r = await api('POST', '/groups', { name: 'g', metadata });
      assert.equal(r.status, 422, JSON.stringify(metadata));
      assert.match(r.body.errors[0].field, /^metadata/);
    }
    const g = (await api('POST', '/groups', { name: 'g' })).body.id;
    assert.equal((await api('PATCH', `/groups/${g}`, { metadata: { k: '\u0000' } })).status, 422);
  });
});

describe('roles hardening › service principals of an organization', () => {
  test('case=allowed_organization_ids defaults to the owner organization; null still means any', async (t) => {
    const { h, realm, api } = await setup(t);
    const org = await seedOrganization(h, realm);
    const owned = await api('POST', '/service-principals', { name: 'robot', owner_organization_id: org });
    assert.equal(owned.status, 201);
    assert.deepEqual(owned.body.allowed_organization_ids, [org]);
    const open = await api('POST', '/service-principals', {
      name: 'open',
      owner_organization_id: org,
      allowed_organization_ids: null,
    });
    assert.equal(open.body.allowed_organization_ids, null);
    const free = await api('POST', '/service-principals', { name: 'free' });
    assert.equal(free.body.allowed_organization_ids, null);
  });
});
