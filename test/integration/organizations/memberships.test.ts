// Memberships administered through the API: every administrator transition of doc 2's membership
// table, roles held through memberships, the last-owner rule, ownership transfer, expiry by the
// worker sweep, and who may do what across organizations.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sweepMemberships } from '../../../src/organizations/membership-expiry.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { count, rows } from '../../harness/signin-kit.ts';
import {
  auditRows,
  type Body,
  body,
  createOrg,
  HOUR,
  membershipRow,
  newUser,
  type OrgSetup,
  orgCaller,
  outbox,
  seedOrgGrant,
  setup,
} from './org-test-kit.ts';

const roleId = async (s: OrgSetup, name: string): Promise<string> => {
  const [r] = await rows(
    s.h,
    'select id from roles where realm_id = $1 and lower(name) = $2 and organization_id is null',
    [s.realm.id, name],
  );
  return r?.id;
};

const addMember = async (s: OrgSetup, orgId: string, input: Record<string, unknown>) => {
  const res = await s.admin.call('POST', `/organizations/${orgId}/members`, input);
  assert.equal(res.status, 201, await res.clone().text());
  return body(res);
};

describe('memberships API › transitions', () => {
  test('case=add, suspend, reactivate, remove with events carrying the authorization revision', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const user = await newUser(s);
    const member = await roleId(s, 'member');
    const m = await addMember(s, org.id, {
      user_id: user,
      role_ids: [member],
      metadata: { team: 'a' },
      external_id: 'hr-1',
    });
    assert.equal(m.state, 'active');
    assert.equal(m.source, 'admin');
    assert.equal(m.organization_id, org.id);
    assert.deepEqual(m.metadata, { team: 'a' });
    assert.equal(m.external_id, 'hr-1');
    assert.ok(m.joined_at);
    assert.deepEqual(
      m.roles.map((r: Body) => [r.id, r.name]),
      [[member, 'member']],
    );
    const [added] = (await outbox(s, 'organization.membership.added')).filter((e) => e.data.user_id === user);
    assert.deepEqual(added?.data, { user_id: user, membership_id: m.id, source: 'admin' });
    assert.equal(added?.org_id, org.id);

    const grant = await seedOrgGrant(s, user, org.id);
    const path = `/organizations/${org.id}/members/${m.id}`;
    const step = async (method: string, suffix: string, status: number, state?: string) => {
      s.clock.advance(1);
      const res = await s.admin.call(method, `${path}${suffix}`, { reason: 'because' });
      assert.equal(res.status, status, `${method} ${suffix}`);
      const b = await body(res);
      if (state) assert.equal(b.state, state);
      else assert.equal(b.code, 'conflict');
      return b;
    };
    await step('POST', '/reactivate', 409);
    const suspended = await step('POST', '/suspend', 200, 'suspended');
    assert.deepEqual(
      await grant.live(),
      { grant: false, family: false, opaque: false },
      'suspension revokes at once',
    );
    assert.equal(suspended.roles.length, 1, 'a suspended membership keeps its roles');
    await step('POST', '/suspend', 409);
    await step('POST', '/reactivate', 200, 'active');
    await step('POST', '/suspend', 200, 'suspended');
    const removed = await step('DELETE', '', 200, 'removed');
    assert.deepEqual(removed.roles, [], 'roles held through the membership are deleted');
    await step('DELETE', '', 409);
    await step('POST', '/reactivate', 409);
    await step('POST', '/suspend', 409);

    const changes = await rows(
      s.h,
      `select event_type, org_id, data from outbox where realm_id = $1 and event_type in
         ('organization.membership.suspended', 'organization.membership.reactivated', 'organization.membership.removed')
        order by id`,
      [s.realm.id],
    );
    assert.deepEqual(
      changes.map((e) => [
        e.event_type.split('.').at(-1),
        e.org_id,
        e.data.membership_id,
        e.data.authorization_revision,
      ]),
      [
        ['suspended', org.id, m.id, 2],
        ['reactivated', org.id, m.id, 3],
        ['suspended', org.id, m.id, 4],
        ['removed', org.id, m.id, 5],
      ],
    );
    const [unassigned] = await outbox(s, 'authorization.role.unassigned');
    assert.deepEqual(unassigned?.data, { subject_id: user, role_id: member });
    assert.equal((await auditRows(s, 'organization.membership.suspended'))[0]?.reason, 'because');

    // A removed membership is history: the user may be added again as a new membership.
    const again = await addMember(s, org.id, { user_id: user });
    assert.notEqual(again.id, m.id);
    const dup = await s.admin.call('POST', `/organizations/${org.id}/members`, { user_id: user });
    assert.equal(dup.status, 409);
    const list = await body(await s.admin.call('GET', `/organizations/${org.id}/members?state=removed`));
    assert.deepEqual(
      list.items.map((x: Body) => x.id),
      [m.id],
    );
  });

  test('case=the user, roles and expiry of a new member are checked', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const other = await createOrg(s);
    const user = await newUser(s);
    const realmRole = await roleId(s, 'realm-admin');
    await s.h.ctx.db.query(
      `insert into roles (realm_id, id, name, scope, organization_id) values ($1, 'rol_000000000000000000000other', 'other-only', 'organization', $2)`,
      [s.realm.id, other.id],
    );
    const cases: [Record<string, unknown>, number][] = [
      [{ user_id: 'usr_00000000000000000000000000' }, 422],
      [{ user_id: user, role_ids: [realmRole] }, 422],
      [{ user_id: user, role_ids: ['rol_000000000000000000000other'] }, 422],
      [{ user_id: user, role_ids: ['nope'] }, 422],
      [{ user_id: user, expires_at: new Date(s.clock.now().getTime() - 1000).toISOString() }, 422],
      [{ user_id: user, expires_at: 'tomorrow' }, 422],
      [{ user_id: user, metadata: { k: 'x'.repeat(s.h.ctx.config.limits.metadataBytes) } }, 422],
      [{ user_id: user, admin: true }, 400],
      [{}, 422],
    ];
    for (const [input, status] of cases) {
      const res = await s.admin.call('POST', `/organizations/${org.id}/members`, input);
      assert.equal(res.status, status, JSON.stringify(input).slice(0, 100));
    }
    assert.equal(
      await count(s.h, 'select 1 from memberships where realm_id = $1 and user_id = $2', [s.realm.id, user]),
      0,
      'refused requests write nothing',
    );
  });

  test('case=the last active owner cannot be suspended or removed', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const members = await body(await s.admin.call('GET', `/organizations/${org.id}/members`));
    const owner = members.items[0];
    for (const [method, suffix] of [
      ['POST', '/suspend'],
      ['DELETE', ''],
    ] as const) {
      const res = await s.admin.call(method, `/organizations/${org.id}/members/${owner.id}${suffix}`);
      assert.equal(res.status, 409);
      assert.equal((await body(res)).code, 'last_owner');
    }
    const second = await addMember(s, org.id, {
      user_id: await newUser(s),
      role_ids: [await roleId(s, 'owner')],
    });
    assert.equal((await s.admin.call('DELETE', `/organizations/${org.id}/members/${owner.id}`)).status, 200);
    const res = await s.admin.call('POST', `/organizations/${org.id}/members/${second.id}/suspend`);
    assert.equal((await body(res)).code, 'last_owner');
  });

  test('case=ownership transfer makes an active member an owner; previous owners keep theirs', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const user = await newUser(s);
    const outsider = await newUser(s);
    const m = await addMember(s, org.id, { user_id: user });
    const owner = await roleId(s, 'owner');
    const refused = await s.admin.call('POST', `/organizations/${org.id}/ownership-transfers`, {
      user_id: outsider,
    });
    assert.equal(refused.status, 409);
    assert.equal((await body(refused)).code, 'membership_not_active');
    const res = await s.admin.call('POST', `/organizations/${org.id}/ownership-transfers`, {
      user_id: user,
      reason: 'founder leaves',
    });
    assert.equal(res.status, 201);
    const done: Body = await body(res);
    assert.equal(done.organization_id, org.id);
    assert.equal(done.user_id, user);
    assert.equal(done.role_id, owner);
    assert.match(done.assignment_id, /^ras_/);
    const [event] = (await outbox(s, 'authorization.role.assigned')).filter(
      (e) => e.data.subject_id === user,
    );
    assert.deepEqual(event?.data, { subject_id: user, role_id: owner, assignment_id: done.assignment_id });
    assert.equal(event?.org_id, org.id);
    assert.equal((await auditRows(s, 'organization.ownership.transferred'))[0]?.reason, 'founder leaves');
    const after = await body(await s.admin.call('GET', `/organizations/${org.id}/members/${m.id}`));
    assert.deepEqual(
      after.roles.map((r: Body) => r.name),
      ['owner'],
    );
    const owners = await body(await s.admin.call('GET', `/organizations/${org.id}/members`));
    assert.equal(owners.items.filter((x: Body) => x.roles.some((r: Body) => r.name === 'owner')).length, 2);
    const repeat = await s.admin.call('POST', `/organizations/${org.id}/ownership-transfers`, {
      user_id: user,
    });
    assert.equal(repeat.status, 200, 'already an owner: nothing changes');
    assert.equal((await body(repeat)).assignment_id, done.assignment_id);
  });

  test('case=expiry: the sweep moves active memberships past expires_at to expired without an event', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const user = await newUser(s);
    const expiresAt = new Date(s.clock.now().getTime() + HOUR);
    const m = await addMember(s, org.id, {
      user_id: user,
      role_ids: [await roleId(s, 'member')],
      expires_at: expiresAt.toISOString(),
    });
    assert.equal(m.expires_at, expiresAt.toISOString());
    const grant = await seedOrgGrant(s, user, org.id);
    const deps = { db: s.h.ctx.db };
    assert.equal((await sweepMemberships(deps, new Date(expiresAt.getTime() - 1))).memberships_expired, 0);
    const eventsBefore = await count(s.h, 'select 1 from outbox where realm_id = $1', [s.realm.id]);
    const report = await sweepMemberships(deps, expiresAt);
    assert.equal(report.memberships_expired, 1);
    const row = await membershipRow(s, m.id);
    assert.equal(row?.state, 'expired');
    assert.equal(
      await count(s.h, 'select 1 from role_assignments where realm_id = $1 and membership_id = $2', [
        s.realm.id,
        m.id,
      ]),
      0,
    );
    assert.deepEqual(await grant.live(), { grant: false, family: false, opaque: false });
    assert.equal(await count(s.h, 'select 1 from outbox where realm_id = $1', [s.realm.id]), eventsBefore);
    const [audit] = await auditRows(s, 'organization.membership.expired');
    assert.equal(audit?.actor_type, 'system');
    const res = await s.admin.call('POST', `/organizations/${org.id}/members/${m.id}/reactivate`);
    assert.equal(res.status, 409, 'expired is final');
  });
});

describe('memberships API › who may act', () => {
  test('case=an organization admin manages its organization and gets 404 for another one', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const b = await createOrg(s);
    const orgAdmin = await orgCaller(s, a.id, 'admin');
    const user = await newUser(s);
    assert.equal((await orgAdmin.call('GET', `/organizations/${a.id}`)).status, 200);
    const added = await orgAdmin.call('POST', `/organizations/${a.id}/members`, {
      user_id: user,
      role_ids: [await roleId(s, 'member')],
    });
    assert.equal(added.status, 201);
    assert.equal(
      (await orgAdmin.call('PATCH', `/organizations/${a.id}`, { display_name: 'Renamed' })).status,
      200,
    );
    assert.equal(
      (await orgAdmin.call('POST', `/organizations/${a.id}/domains`, { domain: 'a.example' })).status,
      201,
    );
    for (const [method, path, input] of [
      ['GET', '', undefined],
      ['PATCH', '', { display_name: 'x' }],
      ['GET', '/members', undefined],
      ['POST', '/members', { user_id: user }],
      ['POST', '/invitations', { user_id: user }],
      ['POST', '/suspend', {}],
    ] as const) {
      const res = await orgAdmin.call(method, `/organizations/${b.id}${path}`, input);
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    assert.equal(
      (await orgAdmin.call('GET', '/organizations')).status,
      403,
      'listing all needs a realm permission',
    );
    // Delegation ceiling: an admin cannot hand out the owner role or transfer ownership.
    const other = await newUser(s);
    const owner = await orgAdmin.call('POST', `/organizations/${a.id}/members`, {
      user_id: other,
      role_ids: [await roleId(s, 'owner')],
    });
    assert.equal(owner.status, 403);
    const transfer = await orgAdmin.call('POST', `/organizations/${a.id}/ownership-transfers`, {
      user_id: user,
    });
    assert.equal(transfer.status, 403);
  });

  test('case=a member reads its organization but every write is 403', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const member = await orgCaller(s, org.id, 'member');
    const user = await newUser(s);
    assert.equal((await member.call('GET', `/organizations/${org.id}`)).status, 200);
    assert.equal((await member.call('GET', `/organizations/${org.id}/members`)).status, 200);
    for (const [method, path, input] of [
      ['PATCH', '', { display_name: 'x' }],
      ['POST', '/members', { user_id: user }],
      ['POST', '/invitations', { user_id: user }],
      ['POST', '/suspend', {}],
      ['POST', '/domains', { domain: 'm.example' }],
      ['POST', '/ownership-transfers', { user_id: user }],
      ['DELETE', '', undefined],
    ] as const) {
      const res = await member.call(method, `/organizations/${org.id}${path}`, input);
      assert.equal(res.status, 403, `${method} ${path}`);
    }
    // A member whose membership is suspended has no standing at all.
    const [m] = await rows(s.h, 'select id from memberships where realm_id = $1 and user_id = $2', [
      s.realm.id,
      member.userId,
    ]);
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/members/${m?.id}/suspend`)).status,
      200,
    );
    assert.equal((await member.call('GET', `/organizations/${org.id}`)).status, 404);
  });

  test('case=a caller with no standing anywhere gets 404 for organization routes', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const nobody = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal((await nobody.call('GET', `/organizations/${org.id}`)).status, 404);
    assert.equal((await nobody.call('GET', `/organizations/${org.id}/members`)).status, 404);
  });
});
