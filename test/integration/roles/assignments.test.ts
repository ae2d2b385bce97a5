// Role assignments through the administration API: what they grant on the admin API itself
// (directly, through a group, through a composite, inside their validity window), the scope and
// subject rules, incompatible roles, organization administrators, events and audit.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { seedMembership, seedOrganization, seedOrgRole } from '../../harness/org-kit.ts';
import { audits, events, movableClock, rows } from '../../harness/signin-kit.ts';
import { assign, type Body, bareCaller, createRole, send, setup } from './roles-kit.ts';

const MINUTE = 60_000;

async function clockSetup(t: TestContext) {
  const clock = movableClock();
  const s = await setup(t, clock);
  const reader = await createRole(s.admin, { name: 'user-reader', permissions: ['realm.users.read'] });
  const bob = await bareCaller(s.h, s.realm);
  const canRead = async () => (await send(bob, 'GET', '/users')).status;
  return { ...s, clock, reader, bob, canRead };
}

describe('role assignments › what they grant', () => {
  test('case=an assignment grants its permissions until it is removed; events and audit follow', async (t) => {
    const { h, realm, admin, api, reader, bob, canRead } = await clockSetup(t);
    assert.equal(await canRead(), 403);
    const before = (
      await rows(h, 'select authz_version from users where realm_id = $1 and id = $2', [realm.id, bob.userId])
    )[0]?.authz_version;
    const created = await assign(admin, reader, { type: 'user', id: bob.userId }, { reason: 'on-call' });
    assert.equal(created.status, 201);
    assert.deepEqual(
      { ...created.body, id: undefined, created_at: undefined },
      {
        id: undefined,
        role_id: reader,
        role: 'user-reader',
        subject_type: 'user',
        subject_id: bob.userId,
        scope_type: 'realm',
        scope_id: null,
        conditions: null,
        valid_from: null,
        expires_at: null,
        source: 'admin',
        reason: 'on-call',
        membership_id: null,
        created_at: undefined,
      },
    );
    assert.equal(await canRead(), 200);
    const after = (
      await rows(h, 'select authz_version from users where realm_id = $1 and id = $2', [realm.id, bob.userId])
    )[0]?.authz_version;
    assert.equal(after, before + 1);
    const [assigned] = await events(h, realm, 'authorization.role.assigned');
    assert.deepEqual(assigned?.data, {
      subject_id: bob.userId,
      role_id: reader,
      assignment_id: created.body.id,
    });
    assert.equal(assigned?.org_id, null);
    const [audit] = await audits(h, realm, 'role.assigned');
    assert.deepEqual(
      [audit?.actor_id, audit?.subject_id, audit?.reason],
      [admin.userId, bob.userId, 'on-call'],
    );

    const listed = await api('GET', `/role-assignments?subject_id=${bob.userId}`);
    assert.deepEqual(
      listed.body.items.map((a: Body) => a.id),
      [created.body.id],
    );
    assert.equal((await api('GET', `/role-assignments/${created.body.id}`)).body.role, 'user-reader');
    assert.equal(
      (
        await api('POST', '/role-assignments', {
          role_id: reader,
          subject_type: 'user',
          subject_id: bob.userId,
          scope_type: 'realm',
        })
      ).status,
      409,
    );
    assert.equal((await api('DELETE', `/role-assignments/${created.body.id}`)).status, 204);
    assert.equal(await canRead(), 403);
    const [unassigned] = await events(h, realm, 'authorization.role.unassigned');
    assert.deepEqual(unassigned?.data, { subject_id: bob.userId, role_id: reader });
    assert.equal((await api('DELETE', `/role-assignments/${created.body.id}`)).status, 404);
  });

  test('case=valid_from in the future grants nothing until it arrives', async (t) => {
    const { admin, clock, reader, bob, canRead } = await clockSetup(t);
    const from = new Date(clock.now().getTime() + 2 * MINUTE);
    const r = await assign(
      admin,
      reader,
      { type: 'user', id: bob.userId },
      { valid_from: from.toISOString() },
    );
    assert.equal(r.status, 201);
    assert.equal(r.body.valid_from, from.toISOString());
    assert.equal(await canRead(), 403);
    clock.advance(3 * MINUTE);
    assert.equal(await canRead(), 200);
  });

  test('case=an expired assignment grants nothing', async (t) => {
    const { admin, clock, reader, bob, canRead } = await clockSetup(t);
    const until = new Date(clock.now().getTime() + MINUTE);
    const r = await assign(
      admin,
      reader,
      { type: 'user', id: bob.userId },
      { expires_at: until.toISOString() },
    );
    assert.equal(r.status, 201);
    assert.equal(await canRead(), 200);
    clock.advance(2 * MINUTE);
    assert.equal(await canRead(), 403);
  });

  test('case=through a group (and its parent), with the same validity rules', async (t) => {
    const { admin, api, clock, reader, bob, canRead } = await clockSetup(t);
    const parent = (await api('POST', '/groups', { name: 'staff' })).body.id;
    const child = (await api('POST', '/groups', { name: 'support', parent_id: parent })).body.id;
    assert.equal((await api('PUT', `/groups/${child}/members/user/${bob.userId}`)).status, 204);
    const until = new Date(clock.now().getTime() + MINUTE);
    const r = await assign(admin, reader, { type: 'group', id: parent }, { expires_at: until.toISOString() });
    assert.equal(r.status, 201);
    assert.equal(await canRead(), 200);
    clock.advance(2 * MINUTE);
    assert.equal(await canRead(), 403);
    const later = new Date(clock.now().getTime() + MINUTE);
    await assign(admin, reader, { type: 'group', id: child }, { valid_from: later.toISOString() });
    assert.equal(await canRead(), 403);
    clock.advance(2 * MINUTE);
    assert.equal(await canRead(), 200);
    assert.equal((await api('DELETE', `/groups/${child}/members/user/${bob.userId}`)).status, 204);
    assert.equal(await canRead(), 403);
  });

  test('case=through a composite, with the same validity rules', async (t) => {
    const { admin, clock, reader, bob, canRead } = await clockSetup(t);
    const helpdesk = await createRole(admin, { name: 'helpdesk', composite_role_ids: [reader] });
    const later = new Date(clock.now().getTime() + MINUTE);
    await assign(admin, helpdesk, { type: 'user', id: bob.userId }, { valid_from: later.toISOString() });
    assert.equal(await canRead(), 403);
    clock.advance(2 * MINUTE);
    assert.equal(await canRead(), 200);
  });

  test('case=conditions: require_mfa is met by an MFA session', async (t) => {
    const { admin, reader, bob, canRead } = await clockSetup(t);
    const r = await assign(
      admin,
      reader,
      { type: 'user', id: bob.userId },
      { conditions: { require_mfa: true } },
    );
    assert.deepEqual(r.body.conditions, { require_mfa: true });
    assert.equal(await canRead(), 200);
  });
});

describe('role assignments › rules', () => {
  test('case=incompatible roles cannot be held together, directly or through a composite', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const requester = await createRole(admin, { name: 'payment-requester' });
    const approver = await createRole(admin, {
      name: 'payment-approver',
      incompatible_role_ids: [requester],
    });
    const bundle = await createRole(admin, { name: 'finance-bundle', composite_role_ids: [requester] });
    const eve = await bareCaller(h, realm);
    assert.equal((await assign(admin, approver, { type: 'user', id: eve.userId })).status, 201);
    const direct = await assign(admin, requester, { type: 'user', id: eve.userId });
    assert.deepEqual([direct.status, direct.body.code], [409, 'incompatible_roles']);
    const composite = await assign(admin, bundle, { type: 'user', id: eve.userId });
    assert.deepEqual([composite.status, composite.body.code], [409, 'incompatible_roles']);
    // Through a group the subject belongs to.
    const group = (await api('POST', '/groups', { name: 'requesters' })).body.id;
    await api('PUT', `/groups/${group}/members/user/${eve.userId}`);
    const frank = await bareCaller(h, realm);
    await api('PUT', `/groups/${group}/members/user/${frank.userId}`);
    assert.equal((await assign(admin, requester, { type: 'group', id: group })).status, 201);
    const viaGroup = await assign(admin, approver, { type: 'user', id: frank.userId });
    assert.deepEqual([viaGroup.status, viaGroup.body.code], [409, 'incompatible_roles']);
    // The refused assignment left nothing behind.
    assert.equal(
      (
        await rows(h, 'select 1 from role_assignments where realm_id = $1 and subject_id = $2', [
          realm.id,
          frank.userId,
        ])
      ).length,
      0,
    );
    // A role cannot contain both sides.
    const both = await api('POST', '/roles', { name: 'both', composite_role_ids: [requester, approver] });
    assert.equal(both.body.errors[0].code, 'incompatible_within_role');
  });

  test('case=scope, subject and body rules', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const org = await seedOrganization(h, realm);
    const realmRole = await createRole(admin, { name: 'r' });
    const orgRole = await createRole(admin, { name: 'o', scope: 'organization' });
    const project = (await api('POST', '/projects', { name: 'Apollo' })).body.id;
    const projectRole = await createRole(admin, { name: 'p', scope: 'project', project_id: project });
    const gina = await bareCaller(h, realm);
    const user = { type: 'user', id: gina.userId };
    const at = (scope_type: string, scope_id?: string) => ({ scope_type, ...(scope_id ? { scope_id } : {}) });

    const wrongScope = await assign(admin, realmRole, user, at('organization', org));
    assert.deepEqual([wrongScope.status, wrongScope.body.errors[0].code], [422, 'scope_mismatch']);
    assert.equal((await assign(admin, orgRole, user, at('realm'))).status, 422);
    const otherProject = (await api('POST', '/projects', { name: 'Gemini' })).body.id;
    assert.equal((await assign(admin, projectRole, user, at('project', otherProject))).status, 422);
    assert.equal((await assign(admin, projectRole, user, at('project', project))).status, 201);

    assert.equal((await assign(admin, orgRole, user, at('organization', 'org_missing'))).status, 404);
    assert.equal((await assign(admin, 'rol_missing', user)).status, 404);
    assert.equal((await assign(admin, realmRole, { type: 'user', id: 'usr_missing' })).status, 404);
    assert.equal(
      (await assign(admin, realmRole, { type: 'service_principal', id: 'spr_missing' })).status,
      404,
    );
    assert.equal((await assign(admin, realmRole, { type: 'group', id: 'grp_missing' })).status, 404);
    // Inside an organization the user must belong to it.
    const notMember = await assign(admin, orgRole, user, at('organization', org));
    assert.equal(notMember.status, 409);
    await seedMembership(h, realm, org, gina.userId);
    assert.equal((await assign(admin, orgRole, user, at('organization', org))).status, 201);
    // An organization's group only inside that organization.
    const orgGroup = (await api('POST', `/organizations/${org}/groups`, { name: 'team' })).body.id;
    assert.equal((await assign(admin, realmRole, { type: 'group', id: orgGroup })).status, 422);
    assert.equal(
      (await assign(admin, orgRole, { type: 'group', id: orgGroup }, at('organization', org))).status,
      201,
    );

    const past = new Date(Date.now() - MINUTE).toISOString();
    assert.equal((await assign(admin, realmRole, user, { expires_at: past })).status, 422);
    const soon = new Date(Date.now() + MINUTE).toISOString();
    const later = new Date(Date.now() + 2 * MINUTE).toISOString();
    assert.equal((await assign(admin, realmRole, user, { valid_from: later, expires_at: soon })).status, 422);
    assert.equal((await assign(admin, realmRole, user, { expires_at: 'tomorrow' })).status, 422);
    assert.equal(
      (await assign(admin, realmRole, user, { conditions: { max_auth_age_seconds: 86401 } })).status,
      422,
    );
    assert.equal(
      (await assign(admin, realmRole, user, { conditions: { require_webauthn: true } })).status,
      400,
    );
    assert.equal((await assign(admin, realmRole, user, { reason: 'x'.repeat(501) })).status, 422);
    assert.equal((await assign(admin, orgRole, user, { scope_type: 'organization' })).status, 422);
    assert.equal((await assign(admin, realmRole, user, { scope_id: org })).status, 422);
    assert.equal((await api('GET', '/role-assignments?scope_type=galaxy')).status, 400);
    assert.equal((await api('GET', '/role-assignments?colour=red')).status, 400);
  });

  test('case=assignments that come with a membership are managed by the membership', async (t) => {
    const { h, realm, api } = await setup(t);
    const org = await seedOrganization(h, realm);
    const user = await bareCaller(h, realm);
    const membership = await seedMembership(h, realm, org, user.userId);
    const id = await seedOrgRole(h, realm, org, { type: 'user', id: user.userId }, 'member');
    await h.ctx.db.query('update role_assignments set membership_id = $3 where realm_id = $1 and id = $2', [
      realm.id,
      id,
      membership,
    ]);
    const r = await api('DELETE', `/role-assignments/${id}`);
    assert.equal(r.status, 409);
    assert.equal((await api('GET', `/role-assignments/${id}`)).body.membership_id, membership);
  });

  test('case=paging with a cursor bound to the filters', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const role = await createRole(admin, { name: 'r' });
    for (let i = 0; i < 3; i++) {
      const u = await h.createUser(realm, { email: `p${i}@example.com` });
      await assign(admin, role, { type: 'user', id: u.id });
    }
    const first = await api('GET', `/role-assignments?role_id=${role}&limit=2`);
    assert.equal(first.body.items.length, 2);
    const second = await api(
      'GET',
      `/role-assignments?role_id=${role}&limit=2&cursor=${first.body.next_cursor}`,
    );
    assert.equal(second.body.items.length, 1);
    assert.equal(second.body.next_cursor, null);
    const rebound = await api('GET', `/role-assignments?limit=2&cursor=${first.body.next_cursor}`);
    assert.equal(rebound.status, 400);
  });

  test('case=without realm.roles.write nothing is assigned or removed; without read nothing is listed', async (t) => {
    const { h, realm, admin } = await setup(t);
    const role = await createRole(admin, { name: 'r' });
    const nobody = await bareCaller(h, realm);
    assert.equal((await assign(nobody, role, { type: 'user', id: nobody.userId })).status, 403);
    const a = await assign(admin, role, { type: 'user', id: nobody.userId });
    assert.equal((await send(nobody, 'DELETE', `/role-assignments/${a.body.id}`)).status, 403);
    assert.equal((await send(nobody, 'GET', '/role-assignments')).status, 403);
  });
});

describe('role assignments › organization administrators', () => {
  test('case=assign inside their organization only, with org_id on the events', async (t) => {
    const { h, realm, admin, api } = await setup(t);
    const orgA = await seedOrganization(h, realm);
    const orgB = await seedOrganization(h, realm);
    const alice = await bareCaller(h, realm);
    await seedMembership(h, realm, orgA, alice.userId);
    await seedOrgRole(h, realm, orgA, { type: 'user', id: alice.userId }, 'admin');
    const viewer = await createRole(admin, {
      name: 'viewer',
      scope: 'organization',
      permissions: ['org.read'],
    });
    const bRole = (await api('POST', `/organizations/${orgB}/roles`, { name: 'b-only' })).body.id;
    const bob = await h.createUser(realm, { email: 'bob@example.com' });
    await seedMembership(h, realm, orgA, bob.id);
    await seedMembership(h, realm, orgB, bob.id);

    const created = await send(alice, 'POST', `/organizations/${orgA}/role-assignments`, {
      role_id: viewer,
      subject_type: 'user',
      subject_id: bob.id,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual([created.body.scope_type, created.body.scope_id], ['organization', orgA]);
    const [event] = await events(h, realm, 'authorization.role.assigned');
    assert.equal(event?.org_id, orgA);
    // Through the realm route as well, since org.roles.assign is held in orgA.
    const rr = await send(alice, 'POST', '/role-assignments', {
      role_id: viewer,
      subject_type: 'user',
      subject_id: alice.userId,
      scope_type: 'organization',
      scope_id: orgA,
    });
    assert.equal(rr.status, 201);
    const elsewhere = await send(alice, 'POST', '/role-assignments', {
      role_id: viewer,
      subject_type: 'user',
      subject_id: bob.id,
      scope_type: 'organization',
      scope_id: orgB,
    });
    assert.equal(elsewhere.status, 403);
    assert.equal(
      (
        await send(alice, 'POST', `/organizations/${orgB}/role-assignments`, {
          role_id: viewer,
          subject_type: 'user',
          subject_id: bob.id,
        })
      ).status,
      404,
    );
    // Another organization's role stays invisible.
    const foreign = await send(alice, 'POST', `/organizations/${orgA}/role-assignments`, {
      role_id: bRole,
      subject_type: 'user',
      subject_id: bob.id,
    });
    assert.equal(foreign.status, 404);
    assert.equal(
      (
        await send(alice, 'POST', `/organizations/${orgA}/role-assignments`, {
          role_id: viewer,
          subject_type: 'user',
          subject_id: bob.id,
          scope_type: 'realm',
        })
      ).status,
      400,
    );
    const list = await send(alice, 'GET', `/organizations/${orgA}/role-assignments?subject_id=${bob.id}`);
    assert.deepEqual(
      list.body.items.map((a: Body) => a.id),
      [created.body.id],
    );
    assert.equal(
      (await send(alice, 'DELETE', `/organizations/${orgA}/role-assignments/${created.body.id}`)).status,
      204,
    );
    const [gone] = await events(h, realm, 'authorization.role.unassigned');
    assert.equal(gone?.org_id, orgA);
    assert.equal((await send(alice, 'GET', '/role-assignments')).status, 403);
  });
});
