// Permissions and roles through the administration API: application permissions, realm-wide
// roles with their graph rules (cycles, expansion limit), built-ins, ETags, organization roles
// and the delegation ceiling.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REALM_PERMISSIONS } from '../../../src/roles/permissions.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { seedMembership, seedOrganization, seedOrgRole } from '../../harness/org-kit.ts';
import { events } from '../../harness/signin-kit.ts';
import { assign, type Body, bareCaller, createRole, send, setup } from './roles-kit.ts';

describe('roles API › permissions', () => {
  test('case=registers application permissions; names are unique ignoring case and not built-in', async (t) => {
    const { api } = await setup(t);
    const created = await api('POST', '/permissions', { name: 'invoices.read', sensitivity: '' });
    assert.equal(created.status, 201);
    assert.deepEqual(
      { ...created.body, created_at: undefined },
      {
        name: 'invoices.read',
        description: null,
        sensitivity: 'normal',
        builtin: false,
        created_at: undefined,
      },
    );
    assert.equal((await api('POST', '/permissions', { name: 'Invoices.READ' })).status, 409);
    const reserved = await api('POST', '/permissions', { name: 'realm.invoices' });
    assert.equal(reserved.status, 422);
    assert.equal(reserved.body.errors[0].code, 'reserved_name');
    assert.equal((await api('POST', '/permissions', { name: 'has space' })).status, 422);
    assert.equal((await api('POST', '/permissions', { name: 'x', sensitivity: 'secret' })).status, 422);
    assert.equal((await api('POST', '/permissions', { name: 'x', colour: 'red' })).status, 400);
    const high = await api('POST', '/permissions', { name: 'invoices.approve', sensitivity: 'privileged' });
    assert.equal(high.body.sensitivity, 'privileged');

    const list = await api('GET', '/permissions');
    assert.deepEqual(
      list.body.items.map((p: Body) => p.name),
      ['invoices.approve', 'invoices.read'],
    );
    const builtin = await api('GET', '/permissions?builtin=true');
    const names = builtin.body.items.map((p: Body) => p.name);
    assert.ok(names.includes('realm.users.read') && names.includes('org.roles.assign'));
    assert.ok(builtin.body.items.every((p: Body) => p.builtin === true));
  });

  test('case=a permission a role holds cannot be deleted until the role drops it', async (t) => {
    const { admin, api } = await setup(t);
    await api('POST', '/permissions', { name: 'invoices.read' });
    const id = await createRole(admin, { name: 'billing', permissions: ['INVOICES.read'] });
    // Stored in its registered spelling.
    assert.deepEqual((await api('GET', `/roles/${id}`)).body.permissions, ['invoices.read']);
    assert.equal((await api('DELETE', '/permissions/invoices.read')).status, 409);
    await api('PUT', `/roles/${id}`, { name: 'billing', permissions: [] });
    assert.equal((await api('DELETE', '/permissions/invoices.read')).status, 204);
    assert.equal((await api('DELETE', '/permissions/invoices.read')).status, 404);
  });

  test('case=reads need realm.roles.read and writes realm.roles.write', async (t) => {
    const { h, realm } = await setup(t);
    const nobody = await bareCaller(h, realm);
    assert.equal((await send(nobody, 'GET', '/permissions')).status, 403);
    assert.equal((await send(nobody, 'POST', '/permissions', { name: 'a.b' })).status, 403);
    assert.equal((await send(nobody, 'GET', '/roles')).status, 403);
    assert.equal((await send(nobody, 'POST', '/roles', { name: 'x' })).status, 403);
  });
});

describe('roles API › realm roles', () => {
  test('case=lists built-ins with their code-defined permissions beside custom roles', async (t) => {
    const { admin, api } = await setup(t);
    await createRole(admin, {
      name: 'auditors',
      description: 'Read users',
      permissions: ['realm.users.read'],
    });
    const list = await api('GET', '/roles');
    assert.equal(list.status, 200);
    const byName = Object.fromEntries(list.body.items.map((r: Body) => [r.name, r]));
    assert.equal(byName['realm-admin'].builtin, true);
    assert.equal(byName['realm-admin'].scope, 'realm');
    for (const p of REALM_PERMISSIONS) assert.ok(byName['realm-admin'].permissions.includes(p));
    assert.equal(byName.owner.scope, 'organization');
    assert.deepEqual(
      { ...byName.auditors, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        name: 'auditors',
        description: 'Read users',
        builtin: false,
        scope: 'realm',
        organization_id: null,
        project_id: null,
        permissions: ['realm.users.read'],
        composite_role_ids: [],
        incompatible_role_ids: [],
        version: 1,
        created_at: undefined,
        updated_at: undefined,
      },
    );
  });

  test('case=validates names, permissions and scope', async (t) => {
    const { admin, api } = await setup(t);
    await createRole(admin, { name: 'Support' });
    assert.equal((await api('POST', '/roles', { name: 'support' })).status, 409);
    const unknown = await api('POST', '/roles', { name: 'x', permissions: ['nope.read', 'realm.nope'] });
    assert.equal(unknown.status, 422);
    assert.deepEqual(
      unknown.body.errors.map((e: Body) => e.code),
      ['unknown_permission', 'unknown_permission'],
    );
    const orgRealmPerm = await api('POST', '/roles', {
      name: 'y',
      scope: 'organization',
      permissions: ['realm.users.read'],
    });
    assert.equal(orgRealmPerm.status, 422);
    assert.equal(orgRealmPerm.body.errors[0].code, 'not_allowed_in_scope');
    assert.equal((await api('POST', '/roles', { name: '' })).status, 422);
    assert.equal((await api('POST', '/roles', { name: 'z'.repeat(101) })).status, 422);
    assert.equal((await api('POST', '/roles', { name: 'p', scope: 'project' })).status, 422);
    assert.equal(
      (await api('POST', '/roles', { name: 'p', scope: 'project', project_id: 'prj_none' })).status,
      422,
    );
    const project = await api('POST', '/projects', { name: 'Apollo' });
    const pr = await api('POST', '/roles', { name: 'p', scope: 'project', project_id: project.body.id });
    assert.equal(pr.status, 201);
    assert.equal(pr.body.project_id, project.body.id);
    const listed = await api('GET', `/roles?project_id=${project.body.id}`);
    assert.deepEqual(
      listed.body.items.map((r: Body) => r.id),
      [pr.body.id],
    );
  });

  test('case=PUT replaces the definition under its ETag; a stale If-Match is 412', async (t) => {
    const { admin, api } = await setup(t);
    const id = await createRole(admin, { name: 'ops', permissions: ['realm.users.read'] });
    const read = await api('GET', `/roles/${id}`);
    assert.equal(read.headers.get('etag'), '"1"');
    const put = await api(
      'PUT',
      `/roles/${id}`,
      { name: 'operations', permissions: ['realm.users.write'] },
      { 'if-match': '"1"' },
    );
    assert.equal(put.status, 200);
    assert.equal(put.headers.get('etag'), '"2"');
    assert.deepEqual(
      [put.body.name, put.body.description, put.body.permissions],
      ['operations', '', ['realm.users.write']],
    );
    const stale = await api('PUT', `/roles/${id}`, { name: 'ops' }, { 'if-match': '"1"' });
    assert.equal(stale.status, 412);
    assert.equal(stale.body.code, 'precondition_failed');
    assert.equal((await api('PUT', `/roles/${id}`, { name: 'ops', scope: 'organization' })).status, 422);
    assert.equal((await api('GET', `/roles/${id}`)).body.name, 'operations');
  });

  test('case=built-in roles cannot be changed or deleted', async (t) => {
    const { api } = await setup(t);
    const builtin = (await api('GET', '/roles')).body.items.find((r: Body) => r.name === 'realm-admin');
    const put = await api('PUT', `/roles/${builtin.id}`, { name: 'realm-admin', permissions: [] });
    assert.deepEqual([put.status, put.body.code], [409, 'builtin_role_immutable']);
    const del = await api('DELETE', `/roles/${builtin.id}`);
    assert.deepEqual([del.status, del.body.code], [409, 'builtin_role_immutable']);
    assert.equal((await api('GET', `/roles/${builtin.id}`)).body.builtin, true);
  });

  test('case=a composite cycle is refused, directly and through another role', async (t) => {
    const { admin, api } = await setup(t);
    const b = await createRole(admin, { name: 'b' });
    const a = await createRole(admin, { name: 'a', composite_role_ids: [b] });
    const back = await api('PUT', `/roles/${b}`, { name: 'b', composite_role_ids: [a] });
    assert.equal(back.status, 422);
    assert.equal(back.body.errors[0].code, 'composite_cycle');
    const self = await api('PUT', `/roles/${a}`, { name: 'a', composite_role_ids: [a] });
    assert.equal(self.status, 422);
    assert.equal(self.body.errors[0].code, 'composite_cycle');
    assert.deepEqual((await api('GET', `/roles/${b}`)).body.composite_role_ids, []);
    const unknown = await api('POST', '/roles', { name: 'c', composite_role_ids: ['rol_missing'] });
    assert.equal(unknown.body.errors[0].code, 'unknown_role');
  });

  test('case=a role expands to at most 64 roles: 64 pass, 65 are refused', async (t) => {
    const { admin, api } = await setup(t);
    const leaves: string[] = [];
    for (let i = 0; i < 64; i++) leaves.push(await createRole(admin, { name: `leaf-${i}` }));
    const ok = await api('POST', '/roles', { name: 'wide', composite_role_ids: leaves.slice(0, 63) });
    assert.equal(ok.status, 201);
    const over = await api('POST', '/roles', { name: 'wider', composite_role_ids: leaves });
    assert.equal(over.status, 422);
    assert.equal(over.body.errors[0].code, 'role_expansion_limit');
    // Growing a member of 'wide' would push 'wide' itself to 65.
    const grow = await api('PUT', `/roles/${leaves[0]}`, {
      name: 'leaf-0',
      composite_role_ids: [leaves[63]],
    });
    assert.equal(grow.status, 422);
    assert.equal(grow.body.errors[0].code, 'role_expansion_limit');
  });

  test('case=deleting a role removes its assignments, announces each and leaves other roles clean', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const inner = await createRole(admin, { name: 'inner', permissions: ['realm.users.read'] });
    const outer = await createRole(admin, { name: 'outer', composite_role_ids: [inner] });
    const bob = await bareCaller(h, realm);
    const a = await assign(admin, inner, { type: 'user', id: bob.userId });
    assert.equal(a.status, 201);
    assert.equal((await send(bob, 'GET', '/users')).status, 200);
    assert.equal((await api('DELETE', `/roles/${inner}`)).status, 204);
    assert.equal((await send(bob, 'GET', '/users')).status, 403);
    assert.equal((await api('GET', `/roles/${inner}`)).status, 404);
    assert.deepEqual((await api('GET', `/roles/${outer}`)).body.composite_role_ids, []);
    const gone = (await events(h, realm, 'authorization.role.unassigned')).filter(
      (e) => e.data.role_id === inner,
    );
    assert.deepEqual(
      gone.map((e) => [e.data, e.org_id]),
      [[{ subject_id: bob.userId, role_id: inner }, null]],
    );
  });
});

describe('roles API › organization roles', () => {
  async function orgSetup(t: Parameters<typeof setup>[0]) {
    const s = await setup(t);
    const orgA = await seedOrganization(s.h, s.realm);
    const orgB = await seedOrganization(s.h, s.realm);
    // An administrator of organization A only.
    const alice = await bareCaller(s.h, s.realm);
    await seedMembership(s.h, s.realm, orgA, alice.userId);
    await seedOrgRole(s.h, s.realm, orgA, { type: 'user', id: alice.userId }, 'admin');
    return { ...s, orgA, orgB, alice };
  }

  test('case=roles of one organization live only inside it', async (t) => {
    const { admin, api, alice, orgA, orgB } = await orgSetup(t);
    const created = await send(alice, 'POST', `/organizations/${orgA}/roles`, {
      name: 'reviewers',
      permissions: ['org.members.read'],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual([created.body.scope, created.body.organization_id], ['organization', orgA]);
    const id = created.body.id;
    assert.equal((await send(alice, 'GET', `/organizations/${orgA}/roles/${id}`)).status, 200);
    assert.deepEqual(
      (await send(alice, 'GET', `/organizations/${orgA}/roles`)).body.items.map((r: Body) => r.id),
      [id],
    );
    // Another organization's role is not found, even for a realm administrator.
    assert.equal((await api('GET', `/organizations/${orgB}/roles/${id}`)).status, 404);
    assert.equal((await api('PUT', `/organizations/${orgB}/roles/${id}`, { name: 'x' })).status, 404);
    assert.equal((await api('DELETE', `/organizations/${orgB}/roles/${id}`)).status, 404);
    assert.equal((await api('GET', `/roles/${id}`)).status, 404);
    assert.ok(!(await api('GET', '/roles')).body.items.some((r: Body) => r.id === id));
    // Alice has no standing in organization B.
    assert.equal((await send(alice, 'GET', `/organizations/${orgB}/roles`)).status, 404);
    // Names are unique within a boundary only.
    assert.equal(
      (await send(alice, 'POST', `/organizations/${orgA}/roles`, { name: 'Reviewers' })).status,
      409,
    );
    assert.equal((await api('POST', `/organizations/${orgB}/roles`, { name: 'reviewers' })).status, 201);
    await createRole(admin, { name: 'reviewers' });
    assert.equal(
      (await send(alice, 'POST', `/organizations/${orgA}/roles`, { name: 'x', scope: 'realm' })).status,
      422,
    );
    assert.equal((await api('GET', '/organizations/org_doesnotexist/roles')).status, 404);
  });

  test('case=an organization role may compose realm-wide organization roles, not realm roles', async (t) => {
    const { admin, api, orgA } = await orgSetup(t);
    const wide = await createRole(admin, {
      name: 'viewer',
      scope: 'organization',
      permissions: ['org.read'],
    });
    const realmRole = await createRole(admin, { name: 'realm-viewer', permissions: ['realm.users.read'] });
    const ok = await api('POST', `/organizations/${orgA}/roles`, {
      name: 'lead',
      composite_role_ids: [wide],
    });
    assert.equal(ok.status, 201);
    const bad = await api('POST', `/organizations/${orgA}/roles`, {
      name: 'lead2',
      composite_role_ids: [realmRole],
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.errors[0].code, 'scope_mismatch');
  });
});

describe('roles API › delegation ceiling', () => {
  test('case=a role manager can only define and hand out roles within what it holds', async (t) => {
    const { h, realm, admin } = await setup(t);
    const manager = await createRole(admin, {
      name: 'role-manager',
      permissions: ['realm.roles.read', 'realm.roles.write', 'realm.groups.read'],
    });
    const carol = await bareCaller(h, realm);
    assert.equal((await assign(admin, manager, { type: 'user', id: carol.userId })).status, 201);

    const within = await send(carol, 'POST', '/roles', {
      name: 'group-reader',
      permissions: ['realm.groups.read'],
    });
    assert.equal(within.status, 201);
    const beyond = await send(carol, 'POST', '/roles', {
      name: 'user-reader',
      permissions: ['realm.users.read'],
    });
    assert.equal(beyond.status, 403);
    assert.match(beyond.body.detail, /realm\.users\.read/);
    // Through a composite too.
    const strong = await createRole(admin, { name: 'strong', permissions: ['realm.users.write'] });
    assert.equal(
      (await send(carol, 'POST', '/roles', { name: 'wrap', composite_role_ids: [strong] })).status,
      403,
    );
    // Handing out a role beyond the ceiling, including the built-in realm-admin.
    const dave = await bareCaller(h, realm);
    const realmAdmin = (await send(admin, 'GET', '/roles')).body.items.find(
      (r: Body) => r.name === 'realm-admin',
    );
    assert.equal((await assign(carol, realmAdmin.id, { type: 'user', id: dave.userId })).status, 403);
    assert.equal((await assign(carol, strong, { type: 'user', id: dave.userId })).status, 403);
    assert.equal((await assign(carol, within.body.id, { type: 'user', id: dave.userId })).status, 201);
    // realm-admin holds everything, application permissions included.
    await send(admin, 'POST', '/permissions', { name: 'invoices.read' });
    assert.equal(
      (await send(admin, 'POST', '/roles', { name: 'billing', permissions: ['invoices.read'] })).status,
      201,
    );
    assert.equal(
      (await send(carol, 'POST', '/roles', { name: 'billing2', permissions: ['invoices.read'] })).status,
      403,
    );
  });

  test('case=an organization administrator cannot create a role with powers the admin role lacks', async (t) => {
    const { h, realm } = await setup(t);
    const org = await seedOrganization(h, realm);
    const alice = await apiCaller(h, realm, { roles: [] });
    await seedMembership(h, realm, org, alice.userId);
    await seedOrgRole(h, realm, org, { type: 'user', id: alice.userId }, 'admin');
    const del = await send(alice, 'POST', `/organizations/${org}/roles`, {
      name: 'deleter',
      permissions: ['org.delete'],
    });
    assert.equal(del.status, 403);
    const ok = await send(alice, 'POST', `/organizations/${org}/roles`, {
      name: 'inviter',
      permissions: ['org.members.invite'],
    });
    assert.equal(ok.status, 201);
  });
});
