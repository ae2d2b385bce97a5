// Regressions from the security review of the organizations API: the delegation ceiling and
// incompatible roles on every path that sets membership roles, rights that must not outlive a
// membership, acting against owners, memberships at their expiry instant, NUL in metadata, and
// the events of organization deletion.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sweepMemberships } from '../../../src/organizations/membership-expiry.task.ts';
import { rows } from '../../harness/signin-kit.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
import {
  accountCaller,
  auditRows,
  type Body,
  body,
  createOrg,
  membershipRow,
  newUser,
  type OrgSetup,
  orgCaller,
  outbox,
  setup,
} from './org-test-kit.ts';

const MINUTE = 60_000;

const builtin = async (s: OrgSetup, name: string): Promise<string> => {
  const [r] = await rows(
    s.h,
    'select id from roles where realm_id = $1 and name = $2 and builtin and organization_id is null',
    [s.realm.id, name],
  );
  return r?.id;
};

const orgRole = async (s: OrgSetup, orgId: string, input: Record<string, unknown>): Promise<string> => {
  const res = await s.admin.call('POST', `/organizations/${orgId}/roles`, input);
  assert.equal(res.status, 201, await res.clone().text());
  return (await body(res)).id;
};

const addMember = async (s: OrgSetup, orgId: string, input: Record<string, unknown>) => {
  const res = await s.admin.call('POST', `/organizations/${orgId}/members`, input);
  assert.equal(res.status, 201, await res.clone().text());
  return body(res);
};

const membershipOf = async (s: OrgSetup, orgId: string, userId: string): Promise<string> => {
  const [m] = await rows(
    s.h,
    `select id from memberships where realm_id = $1 and organization_id = $2 and user_id = $3
        and state not in ('removed', 'expired')`,
    [s.realm.id, orgId, userId],
  );
  return m?.id;
};

const orgAssignments = (s: OrgSetup, orgId: string, userId: string) =>
  rows(
    s.h,
    `select role_id, membership_id from role_assignments where realm_id = $1 and subject_type = 'user'
        and subject_id = $2 and scope_type = 'organization' and scope_id = $3`,
    [s.realm.id, userId, orgId],
  );

const groupPlaces = (s: OrgSetup, userId: string) =>
  rows(s.h, `select group_id from group_members where realm_id = $1 and subject_id = $2`, [
    s.realm.id,
    userId,
  ]);

describe('organizations hardening › delegation ceiling on membership roles', () => {
  test('case=an admin cannot hand out owner through a composite: add, invite, approve, reassign', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const helper = await orgRole(s, a.id, {
      name: 'helper',
      composite_role_ids: [await builtin(s, 'owner')],
    });
    const orgAdmin = await orgCaller(s, a.id, 'admin');
    const other = await newUser(s);
    const path = `/organizations/${a.id}`;

    const added = await orgAdmin.call('POST', `${path}/members`, { user_id: other, role_ids: [helper] });
    assert.equal(added.status, 403, await added.clone().text());
    assert.equal(await membershipOf(s, a.id, other), undefined);
    const invited = await orgAdmin.call('POST', `${path}/invitations`, {
      user_id: other,
      role_ids: [helper],
    });
    assert.equal(invited.status, 403);

    const filed = await (await accountCaller(s, other)).call('POST', '/me/join-requests', {
      organization_id: a.id,
    });
    assert.equal(filed.status, 201);
    const jrq = (await body(filed)).id;
    const approved = await orgAdmin.call('POST', `${path}/join-requests/${jrq}/approve`, {
      role_ids: [helper],
    });
    assert.equal(approved.status, 403);
    assert.equal((await membershipRow(s, await membershipOf(s, a.id, other)))?.state, 'pending_approval');

    // An invitation sent by the owner with helper, reassigned by the admin, carries helper too.
    const third = await newUser(s);
    const inv = await body(
      await s.admin.call('POST', `${path}/invitations`, { user_id: third, role_ids: [helper] }),
    );
    const reassigned = await orgAdmin.call('POST', `${path}/invitations/${inv.id}/reassign`, {
      user_id: await newUser(s),
    });
    assert.equal(reassigned.status, 403);

    // Within the ceiling it works, and the owner (realm admin) may hand helper out.
    assert.equal(
      (
        await orgAdmin.call('POST', `${path}/members`, {
          user_id: await newUser(s),
          role_ids: [await builtin(s, 'member')],
        })
      ).status,
      201,
    );
    assert.equal(
      (await s.admin.call('POST', `${path}/members`, { user_id: await newUser(s), role_ids: [helper] }))
        .status,
      201,
    );
  });

  test('case=application permissions count: an owner cannot hand out a role granting one it lacks', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    assert.equal((await s.admin.call('POST', '/permissions', { name: 'docs.publish' })).status, 201);
    const publisher = await orgRole(s, a.id, { name: 'publisher', permissions: ['docs.publish'] });
    const owner = await orgCaller(s, a.id, 'owner');
    const res = await owner.call('POST', `/organizations/${a.id}/members`, {
      user_id: await newUser(s),
      role_ids: [publisher],
    });
    assert.equal(res.status, 403, await res.clone().text());
    const text = await body(res);
    assert.match(text.detail, /docs\.publish/);
  });

  test('case=incompatible roles: requested together, or against what the user holds already → 409', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const maker = await orgRole(s, a.id, { name: 'maker' });
    const checker = await orgRole(s, a.id, { name: 'checker', incompatible_role_ids: [maker] });
    const together = await s.admin.call('POST', `/organizations/${a.id}/members`, {
      user_id: await newUser(s),
      role_ids: [maker, checker],
    });
    assert.equal(together.status, 409);
    assert.equal((await body(together)).code, 'incompatible_roles');
    const invite = await s.admin.call('POST', `/organizations/${a.id}/invitations`, {
      user_id: await newUser(s),
      role_ids: [maker, checker],
    });
    assert.equal((await body(invite)).code, 'incompatible_roles');

    // A join request is pending; the user gets maker directly, then approval with checker is refused.
    const user = await newUser(s);
    const jrq = await body(
      await (await accountCaller(s, user)).call('POST', '/me/join-requests', { organization_id: a.id }),
    );
    const direct = await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
      role_id: maker,
      subject_type: 'user',
      subject_id: user,
    });
    assert.equal(direct.status, 201);
    const approve = await s.admin.call('POST', `/organizations/${a.id}/join-requests/${jrq.id}/approve`, {
      role_ids: [checker],
    });
    assert.equal(approve.status, 409);
    assert.equal((await body(approve)).code, 'incompatible_roles');

    // The same for an invitation accepted after a direct assignment.
    const invitee = await newUser(s);
    const inv = await body(
      await s.admin.call('POST', `/organizations/${a.id}/invitations`, {
        user_id: invitee,
        role_ids: [checker],
      }),
    );
    await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
      role_id: maker,
      subject_type: 'user',
      subject_id: invitee,
    });
    const accepted = await (await accountCaller(s, invitee)).call('POST', `/me/invitations/${inv.id}/accept`);
    assert.equal(accepted.status, 409);
    assert.equal((await body(accepted)).code, 'incompatible_roles');
  });
});

describe('organizations hardening › rights end with the membership', () => {
  test('case=removal deletes direct organization roles and group places; a later membership starts empty', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const user = await newUser(s);
    const m = await addMember(s, a.id, { user_id: user, role_ids: [await builtin(s, 'member')] });
    const direct = await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
      role_id: await builtin(s, 'admin'),
      subject_type: 'user',
      subject_id: user,
    });
    assert.equal(direct.status, 201);
    const group = await body(await s.admin.call('POST', `/organizations/${a.id}/groups`, { name: 'team' }));
    assert.equal(
      (await s.admin.call('PUT', `/organizations/${a.id}/groups/${group.id}/members/user/${user}`)).status,
      204,
    );
    const realmGroup = await body(await s.admin.call('POST', '/groups', { name: 'everyone' }));
    assert.equal((await s.admin.call('PUT', `/groups/${realmGroup.id}/members/user/${user}`)).status, 204);

    assert.equal((await s.admin.call('DELETE', `/organizations/${a.id}/members/${m.id}`)).status, 200);
    assert.deepEqual(await orgAssignments(s, a.id, user), []);
    assert.deepEqual(
      (await groupPlaces(s, user)).map((g) => g.group_id),
      [realmGroup.id],
      'realm-wide groups are not the organization’s to clear',
    );
    const unassigned = (await outbox(s, 'authorization.role.unassigned')).filter(
      (e) => e.data.subject_id === user,
    );
    assert.deepEqual(
      unassigned.map((e) => [e.org_id, e.data.role_id]).sort(),
      [
        [a.id, await builtin(s, 'admin')],
        [a.id, await builtin(s, 'member')],
      ].sort(),
    );

    await addMember(s, a.id, { user_id: user });
    assert.deepEqual(await orgAssignments(s, a.id, user), []);
    const members = await body(
      await s.admin.call('GET', `/organizations/${a.id}/groups/${group.id}/members`),
    );
    assert.deepEqual(members.items, []);
  });

  test('case=expiry through the sweep clears them too, without events but audited', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const user = await newUser(s);
    const expiresAt = new Date(s.clock.now().getTime() + MINUTE).toISOString();
    const m = await addMember(s, a.id, { user_id: user, expires_at: expiresAt });
    await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
      role_id: await builtin(s, 'admin'),
      subject_type: 'user',
      subject_id: user,
    });
    const group = await body(await s.admin.call('POST', `/organizations/${a.id}/groups`, { name: 'team' }));
    await s.admin.call('PUT', `/organizations/${a.id}/groups/${group.id}/members/user/${user}`);
    const before = (await outbox(s, 'authorization.role.unassigned')).length;
    s.clock.advance(2 * MINUTE);
    await sweepMemberships({ db: s.h.ctx.db }, s.clock.now());
    assert.equal((await membershipRow(s, m.id))?.state, 'expired');
    assert.deepEqual(await orgAssignments(s, a.id, user), []);
    assert.deepEqual(await groupPlaces(s, user), []);
    assert.equal((await outbox(s, 'authorization.role.unassigned')).length, before);
    assert.equal((await auditRows(s, 'organization.membership.expired')).length, 1);
  });

  test('case=a role held directly and also named by the invitation or join request is adopted, not 409', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const member = await builtin(s, 'member');
    const user = await newUser(s);
    const inv = await body(
      await s.admin.call('POST', `/organizations/${a.id}/invitations`, { user_id: user, role_ids: [member] }),
    );
    const direct = await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
      role_id: member,
      subject_type: 'user',
      subject_id: user,
    });
    assert.equal(direct.status, 201);
    const accepted = await (await accountCaller(s, user)).call('POST', `/me/invitations/${inv.id}/accept`);
    assert.equal(accepted.status, 200, await accepted.clone().text());
    assert.equal((await orgAssignments(s, a.id, user)).length, 1);

    const joiner = await newUser(s);
    const jrq = await body(
      await (await accountCaller(s, joiner)).call('POST', '/me/join-requests', { organization_id: a.id }),
    );
    await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
      role_id: member,
      subject_type: 'user',
      subject_id: joiner,
    });
    const approved = await s.admin.call('POST', `/organizations/${a.id}/join-requests/${jrq.id}/approve`, {
      role_ids: [member],
    });
    assert.equal(approved.status, 200, await approved.clone().text());
  });
});

describe('organizations hardening › acting against owners', () => {
  test('case=an admin cannot suspend or remove an owner; the owner can', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const orgAdmin = await orgCaller(s, a.id, 'admin');
    const owner = await newUser(s);
    const m = await addMember(s, a.id, { user_id: owner, role_ids: [await builtin(s, 'owner')] });
    const path = `/organizations/${a.id}/members/${m.id}`;
    assert.equal((await orgAdmin.call('POST', `${path}/suspend`)).status, 403);
    assert.equal((await orgAdmin.call('DELETE', path)).status, 403);
    assert.equal((await membershipRow(s, m.id))?.state, 'active');
    // A directly held owner role counts as well.
    const plain = await newUser(s);
    const pm = await addMember(s, a.id, { user_id: plain });
    await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
      role_id: await builtin(s, 'owner'),
      subject_type: 'user',
      subject_id: plain,
    });
    assert.equal((await orgAdmin.call('DELETE', `/organizations/${a.id}/members/${pm.id}`)).status, 403);
    assert.equal((await s.admin.call('POST', `${path}/suspend`)).status, 200);
  });

  test('case=deleting the last owner’s direct owner assignment is 409 last_owner', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const user = await newUser(s);
    await addMember(s, a.id, { user_id: user });
    const direct = await body(
      await s.admin.call('POST', `/organizations/${a.id}/role-assignments`, {
        role_id: await builtin(s, 'owner'),
        subject_type: 'user',
        subject_id: user,
      }),
    );
    // The creator leaves; the user with the direct owner role is the last owner.
    const creator = await membershipOf(s, a.id, s.admin.userId);
    assert.equal((await s.admin.call('DELETE', `/organizations/${a.id}/members/${creator}`)).status, 200);
    for (const path of [
      `/organizations/${a.id}/role-assignments/${direct.id}`,
      `/role-assignments/${direct.id}`,
    ]) {
      const res = await s.admin.call('DELETE', path);
      assert.equal(res.status, 409, path);
      assert.equal((await body(res)).code, 'last_owner');
    }
  });
});

describe('organizations hardening › memberships at their expiry instant', () => {
  test('case=an owner past expires_at does not count for the last-owner rule before the sweep', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const user = await newUser(s);
    await addMember(s, a.id, {
      user_id: user,
      role_ids: [await builtin(s, 'owner')],
      expires_at: new Date(s.clock.now().getTime() + MINUTE).toISOString(),
    });
    s.clock.advance(2 * MINUTE);
    const creator = await membershipOf(s, a.id, s.admin.userId);
    const res = await s.admin.call('DELETE', `/organizations/${a.id}/members/${creator}`);
    assert.equal(res.status, 409);
    assert.equal((await body(res)).code, 'last_owner');
  });

  test('case=ownership cannot go to a member past expires_at', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const user = await newUser(s);
    await addMember(s, a.id, {
      user_id: user,
      expires_at: new Date(s.clock.now().getTime() + MINUTE).toISOString(),
    });
    s.clock.advance(2 * MINUTE);
    const res = await s.admin.call('POST', `/organizations/${a.id}/ownership-transfers`, { user_id: user });
    assert.equal(res.status, 409);
    assert.equal((await body(res)).code, 'membership_not_active');
  });

  test('case=reactivating a suspended membership past expires_at records it expired and answers 409', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const user = await newUser(s);
    const m = await addMember(s, a.id, {
      user_id: user,
      role_ids: [await builtin(s, 'member')],
      expires_at: new Date(s.clock.now().getTime() + MINUTE).toISOString(),
    });
    const path = `/organizations/${a.id}/members/${m.id}`;
    assert.equal((await s.admin.call('POST', `${path}/suspend`)).status, 200);
    s.clock.advance(2 * MINUTE);
    const res = await s.admin.call('POST', `${path}/reactivate`);
    assert.equal(res.status, 409);
    assert.equal((await body(res)).code, 'membership_not_active');
    const row = await membershipRow(s, m.id);
    assert.deepEqual([row?.state, row?.ended_reason], ['expired', 'expired']);
    assert.deepEqual(await orgAssignments(s, a.id, user), []);
    assert.equal((await auditRows(s, 'organization.membership.expired')).length, 1);
  });
});

describe('organizations hardening › NUL in metadata', () => {
  test('case=a NUL in a metadata key or value is 422 naming the member, not a server error', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const bad: Record<string, unknown>[] = [{ 'a\u0000': 1 }, { a: 'x\u0000' }, { a: { b: ['\u0000'] } }];
    for (const metadata of bad) {
      const created = await s.admin.call('POST', '/organizations', {
        slug: 'nul',
        display_name: 'n',
        metadata,
      });
      assert.equal(created.status, 422, JSON.stringify(metadata));
      const b: Body = await body(created);
      assert.equal(b.code, 'validation_failed');
      assert.match(b.errors[0].field, /^metadata/);
      const patched = await s.admin.call('PATCH', `/organizations/${a.id}`, { metadata });
      assert.equal(patched.status, 422);
      const member = await s.admin.call('POST', `/organizations/${a.id}/members`, {
        user_id: await newUser(s),
        metadata,
      });
      assert.equal(member.status, 422);
    }
  });
});

describe('organizations hardening › deletion events', () => {
  test('case=service_principal.state_changed of an owned principal carries no org_id', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const sp = await body(
      await s.admin.call('POST', '/service-principals', { name: 'robot', owner_organization_id: a.id }),
    );
    assert.equal((await s.admin.call('DELETE', `/organizations/${a.id}`)).status, 202);
    const [changed] = (await outbox(s, 'service_principal.state_changed')).filter(
      (e) => e.data.service_principal_id === sp.id,
    );
    assert.deepEqual(changed?.data, { service_principal_id: sp.id, state: 'disabled' });
    assert.equal(changed?.org_id, null);
  });
});

/** Deadlocks PostgreSQL detected in this database so far (0 on PGlite, which runs one at a time). */
async function deadlocks(s: OrgSetup): Promise<number> {
  const db = s.h.ctx.db;
  // PostgreSQL 15+ flushes statistics lazily; older servers have no such function.
  await db.query('select pg_stat_force_next_flush()').catch(() => undefined);
  await db.query('select pg_stat_clear_snapshot()');
  const [r] = await rows(
    s.h,
    'select coalesce(deadlocks, 0)::int as n from pg_stat_database where datname = current_database()',
    [],
  );
  return Number(r?.n ?? 0);
}

describe('organizations hardening › lock order', () => {
  test('case=accepting and revoking the same invitations at once neither deadlocks nor half-applies', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const pairs = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const user = await newUser(s);
        const inv = await body(
          await s.admin.call('POST', `/organizations/${a.id}/invitations`, { user_id: user }),
        );
        return { user, inv, me: await accountCaller(s, user) };
      }),
    );
    const before = await deadlocks(s);
    const results = await Promise.all(
      pairs.flatMap(({ inv, me }) => [
        me.call('POST', `/me/invitations/${inv.id}/accept`),
        s.admin.call('POST', `/organizations/${a.id}/invitations/${inv.id}/revoke`),
      ]),
    );
    for (let i = 0; i < results.length; i += 2) {
      const statuses = [results[i]?.status, results[i + 1]?.status].sort();
      assert.deepEqual(statuses, [200, 409], `pair ${i / 2}`);
    }
    // Transactions retry after a deadlock, so statuses alone cannot show one; the server counts them.
    assert.equal(await deadlocks(s), before);
  });
});
