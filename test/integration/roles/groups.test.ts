// Groups through the administration API: nesting limits, moves, members, organization groups,
// deletion and permissions.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { events } from '../../harness/signin-kit.ts';
import { assign, type Body, bareCaller, createRole, orgAdmin, send, setup } from './roles-kit.ts';

type Api = Awaited<ReturnType<typeof setup>>['api'];

/** A chain of nested groups g1 > g2 > ... > gN; returns their ids, top first. */
async function chain(api: Api, n: number, prefix = 'level', path = '/groups'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= n; i++) {
    const r = await api('POST', path, {
      name: `${prefix}-${i}`,
      ...(ids.length ? { parent_id: ids[ids.length - 1] } : {}),
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.depth, i);
    ids.push(r.body.id);
  }
  return ids;
}

describe('groups › tree', () => {
  test('case=groups nest 8 levels deep; a ninth level is refused', async (t) => {
    const { api } = await setup(t);
    const ids = await chain(api, 8);
    const ninth = await api('POST', '/groups', { name: 'level-9', parent_id: ids[7] });
    assert.equal(ninth.status, 422);
    assert.equal(ninth.body.errors[0].code, 'group_depth_limit');
  });

  test('case=moving under itself or a descendant is a cycle; too deep a move is refused', async (t) => {
    const { api } = await setup(t);
    const [a, b, c] = await chain(api, 3, 'a');
    const self = await api('PATCH', `/groups/${a}`, { parent_id: a });
    assert.deepEqual([self.status, self.body.errors[0].code], [422, 'group_cycle']);
    const under = await api('PATCH', `/groups/${a}`, { parent_id: c });
    assert.deepEqual([under.status, under.body.errors[0].code], [422, 'group_cycle']);
    // A 6-deep chain under which the 3-level subtree would reach depth 9.
    const deep = await chain(api, 6, 'd');
    const tooDeep = await api('PATCH', `/groups/${a}`, { parent_id: deep[5] });
    assert.deepEqual([tooDeep.status, tooDeep.body.errors[0].code], [422, 'group_depth_limit']);
    // Depth 5 + 3 levels = 8 fits; the whole subtree moves down.
    const moved = await api('PATCH', `/groups/${a}`, { parent_id: deep[4] });
    assert.equal(moved.status, 200);
    assert.deepEqual([moved.body.parent_id, moved.body.depth], [deep[4], 6]);
    assert.equal((await api('GET', `/groups/${c}`)).body.depth, 8);
    // Back to the top level.
    const top = await api('PATCH', `/groups/${a}`, { parent_id: null });
    assert.deepEqual([top.body.parent_id, top.body.depth], [null, 1]);
    assert.equal((await api('GET', `/groups/${b}`)).body.depth, 2);
    assert.equal((await api('PATCH', `/groups/${a}`, { parent_id: 'grp_missing' })).status, 422);
  });

  test('case=names are unique under one parent; fields change with PATCH', async (t) => {
    const { api } = await setup(t);
    const g = await api('POST', '/groups', {
      name: 'Engineering',
      description: 'Builds things',
      metadata: { cost_center: 42 },
      external_id: 'hr:17',
    });
    assert.deepEqual(
      { ...g.body, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        organization_id: null,
        parent_id: null,
        name: 'Engineering',
        description: 'Builds things',
        metadata: { cost_center: 42 },
        external_id: 'hr:17',
        source: 'admin',
        dynamic_rule: null,
        depth: 1,
        member_count: 0,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    assert.equal((await api('POST', '/groups', { name: 'engineering' })).status, 409);
    assert.equal((await api('POST', '/groups', { name: 'engineering', parent_id: g.body.id })).status, 201);
    const patched = await api('PATCH', `/groups/${g.body.id}`, { description: null, metadata: { a: 1 } });
    assert.deepEqual(
      [patched.body.description, patched.body.metadata, patched.body.name],
      [null, { a: 1 }, 'Engineering'],
    );
    const big = await api('PATCH', `/groups/${g.body.id}`, { metadata: { blob: 'x'.repeat(17000) } });
    assert.equal(big.status, 422);
    assert.equal((await api('PATCH', `/groups/${g.body.id}`, { owner: 'x' })).status, 400);
  });
});

describe('groups › members and deletion', () => {
  test('case=members are added idempotently and listed; deleting a group takes its members and assignments', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const parent = (await api('POST', '/groups', { name: 'parent' })).body.id;
    const child = (await api('POST', '/groups', { name: 'child', parent_id: parent })).body.id;
    const bob = await bareCaller(h, realm);
    const sp = (await api('POST', '/service-principals', { name: 'robot' })).body.id;
    assert.equal((await api('PUT', `/groups/${child}/members/user/${bob.userId}`)).status, 204);
    assert.equal((await api('PUT', `/groups/${child}/members/user/${bob.userId}`)).status, 204);
    assert.equal((await api('PUT', `/groups/${child}/members/service_principal/${sp}`)).status, 204);
    assert.equal((await api('PUT', `/groups/${child}/members/user/usr_missing`)).status, 404);
    assert.equal((await api('PUT', `/groups/${child}/members/robot/${sp}`)).status, 404);
    const members = await api('GET', `/groups/${child}/members`);
    assert.deepEqual(
      members.body.items.map((m: Body) => [m.subject_type, m.subject_id]).sort(),
      [
        ['service_principal', sp],
        ['user', bob.userId],
      ].sort(),
    );
    assert.equal((await api('GET', `/groups/${child}`)).body.member_count, 2);

    const reader = await createRole(admin, { name: 'reader', permissions: ['realm.users.read'] });
    const a = await assign(admin, reader, { type: 'group', id: child });
    assert.equal((await send(bob, 'GET', '/users')).status, 200);
    const parentDelete = await api('DELETE', `/groups/${parent}`);
    assert.equal(parentDelete.status, 409);
    assert.equal((await api('DELETE', `/groups/${child}`)).status, 204);
    assert.equal((await send(bob, 'GET', '/users')).status, 403);
    assert.equal((await api('GET', `/role-assignments/${a.body.id}`)).status, 404);
    const [gone] = await events(h, realm, 'authorization.role.unassigned');
    assert.deepEqual(gone?.data, { subject_id: child, role_id: reader });
    assert.equal((await api('DELETE', `/groups/${parent}`)).status, 204);
  });

  test("case=an organization's groups: same-organization parents, active members only, invisible elsewhere", async (t) => {
    const { h, realm, api } = await setup(t);
    const orgA = await seedOrganization(h, realm);
    const orgB = await seedOrganization(h, realm);
    const { as } = await orgAdmin(h, realm, orgA);

    const team = await as('POST', `/organizations/${orgA}/groups`, { name: 'team' });
    assert.equal(team.status, 201);
    assert.equal(team.body.organization_id, orgA);
    const realmGroup = (await api('POST', '/groups', { name: 'everyone' })).body.id;
    const bGroup = (await api('POST', `/organizations/${orgB}/groups`, { name: 'b-team' })).body.id;
    const wrongParent = await as('POST', `/organizations/${orgA}/groups`, {
      name: 'sub',
      parent_id: realmGroup,
    });
    assert.deepEqual([wrongParent.status, wrongParent.body.errors[0].code], [422, 'organization_mismatch']);
    assert.equal(
      (await as('POST', `/organizations/${orgA}/groups`, { name: 'sub', parent_id: team.body.id })).status,
      201,
    );

    const outsider = await h.createUser(realm, { email: 'out@example.com' });
    const suspended = await h.createUser(realm, { email: 'sus@example.com' });
    await seedMembership(h, realm, orgA, suspended.id, 'suspended');
    const member = await h.createUser(realm, { email: 'in@example.com' });
    await seedMembership(h, realm, orgA, member.id);
    const base = `/organizations/${orgA}/groups/${team.body.id}/members/user`;
    // Not in the organization: not found on its routes, as elsewhere in the realm.
    assert.equal((await as('PUT', `${base}/${outsider.id}`)).status, 404);
    assert.equal((await as('PUT', `${base}/${suspended.id}`)).status, 409);
    assert.equal((await as('PUT', `${base}/${member.id}`)).status, 204);
    assert.equal((await as('GET', `/organizations/${orgA}/groups`)).body.items.length, 2);

    assert.equal((await as('GET', `/organizations/${orgA}/groups/${bGroup}`)).status, 404);
    assert.equal((await api('GET', `/organizations/${orgA}/groups/${bGroup}`)).status, 404);
    assert.equal((await as('GET', `/organizations/${orgB}/groups`)).status, 404);
    // Realm routes see an organization's group too (realm.groups.*), but list realm-wide ones.
    assert.equal((await api('GET', `/groups/${team.body.id}`)).status, 200);
    assert.ok(!(await api('GET', '/groups')).body.items.some((g: Body) => g.id === team.body.id));
  });

  test('case=every route needs its permission; read does not imply write', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const g = (await api('POST', '/groups', { name: 'g' })).body.id;
    const nobody = await bareCaller(h, realm);
    assert.equal((await send(nobody, 'GET', '/groups')).status, 403);
    assert.equal((await send(nobody, 'GET', `/groups/${g}/members`)).status, 403);
    assert.equal((await send(nobody, 'POST', '/groups', { name: 'x' })).status, 403);
    assert.equal((await send(nobody, 'PATCH', `/groups/${g}`, { name: 'x' })).status, 403);
    assert.equal((await send(nobody, 'PUT', `/groups/${g}/members/user/${nobody.userId}`)).status, 403);
    assert.equal((await send(nobody, 'DELETE', `/groups/${g}`)).status, 403);
    const reader = await createRole(admin, { name: 'group-reader', permissions: ['realm.groups.read'] });
    await assign(admin, reader, { type: 'user', id: nobody.userId });
    assert.equal((await send(nobody, 'GET', '/groups')).status, 200);
    assert.equal((await send(nobody, 'DELETE', `/groups/${g}`)).status, 403);
  });
});
