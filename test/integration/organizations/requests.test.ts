// Invitations and join requests: the invited and pending_approval rows of doc 2's membership
// table, from both sides (administrator and the signed-in user), their limits and their expiry.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sweepMemberships } from '../../../src/organizations/membership-expiry.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { count, rows } from '../../harness/signin-kit.ts';
import {
  accountCaller,
  auditRows,
  type Body,
  body,
  createOrg,
  DAY,
  HOUR,
  membershipRow,
  newUser,
  type OrgSetup,
  outbox,
  setup,
} from './org-test-kit.ts';

const memberRole = async (s: OrgSetup): Promise<string> => {
  const [r] = await rows(
    s.h,
    `select id from roles where realm_id = $1 and name = 'member' and organization_id is null`,
    [s.realm.id],
  );
  return r?.id;
};

async function invite(s: OrgSetup, orgId: string, input: Record<string, unknown>): Promise<Body> {
  const res = await s.admin.call('POST', `/organizations/${orgId}/invitations`, input);
  assert.equal(res.status, 201, await res.clone().text());
  return body(res);
}

describe('invitations', () => {
  test('case=invite then accept: membership active with the invited roles and membership.added', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const userId = await newUser(s);
    const role = await memberRole(s);
    const inv = await invite(s, org.id, { user_id: userId, role_ids: [role], message: 'Welcome' });
    assert.match(inv.id, /^inv_[0-9a-z]{26}$/);
    assert.equal(inv.state, 'pending');
    assert.equal(inv.message, 'Welcome');
    assert.equal(Date.parse(inv.expires_at) - s.clock.now().getTime(), 72 * HOUR);
    const m = await membershipRow(s, inv.membership_id);
    assert.equal(m?.state, 'invited');
    const [created] = await outbox(s, 'organization.invitation.created');
    assert.deepEqual(created?.data, { invitation_id: inv.id });
    assert.equal(created?.org_id, org.id);
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/invitations`, { user_id: userId })).status,
      409,
    );

    const me = await accountCaller(s, userId);
    const mine = await body(await me.call('GET', '/me/invitations'));
    assert.deepEqual(
      mine.items.map((i: Body) => [i.id, i.organization.id, i.organization.slug]),
      [[inv.id, org.id, org.slug]],
    );
    const stranger = await apiCaller(s.h, s.realm, { audience: 'account' });
    assert.equal((await stranger.call('POST', `/me/invitations/${inv.id}/accept`)).status, 404);
    assert.equal((await stranger.call('POST', `/me/invitations/${inv.id}/decline`)).status, 404);
    assert.equal((await body(await stranger.call('GET', '/me/invitations'))).items.length, 0);

    const res = await me.call('POST', `/me/invitations/${inv.id}/accept`);
    assert.equal(res.status, 200);
    const joined: Body = await body(res);
    assert.equal(joined.id, inv.membership_id);
    assert.equal(joined.state, 'active');
    assert.equal(joined.source, 'invitation');
    assert.ok(joined.joined_at);
    assert.deepEqual(
      joined.roles.map((r: Body) => r.id),
      [role],
    );
    const added = (await outbox(s, 'organization.membership.added')).filter((e) => e.data.user_id === userId);
    assert.deepEqual(
      added.map((e) => e.data),
      [{ user_id: userId, membership_id: joined.id, source: 'invitation' }],
    );
    assert.equal((await me.call('POST', `/me/invitations/${inv.id}/accept`)).status, 409);
    assert.equal((await me.call('POST', `/me/invitations/${inv.id}/decline`)).status, 409);
    const listed = await body(
      await s.admin.call('GET', `/organizations/${org.id}/invitations?state=accepted`),
    );
    assert.deepEqual(
      listed.items.map((i: Body) => i.id),
      [inv.id],
    );
  });

  test('case=decline and revoke remove the invited membership without a membership event', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const a = await newUser(s);
    const b = await newUser(s);
    const declined = await invite(s, org.id, { user_id: a });
    const revoked = await invite(s, org.id, { user_id: b });
    const me = await accountCaller(s, a);
    const res = await me.call('POST', `/me/invitations/${declined.id}/decline`);
    assert.equal(res.status, 200);
    assert.equal((await body(res)).state, 'declined');
    assert.equal((await membershipRow(s, declined.membership_id))?.state, 'removed');
    const rv = await s.admin.call('POST', `/organizations/${org.id}/invitations/${revoked.id}/revoke`, {
      reason: 'typo',
    });
    assert.equal(rv.status, 200);
    assert.equal((await body(rv)).state, 'revoked');
    assert.equal((await membershipRow(s, revoked.membership_id))?.state, 'removed');
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/invitations/${revoked.id}/revoke`)).status,
      409,
    );
    const them = await accountCaller(s, b);
    assert.equal((await them.call('POST', `/me/invitations/${revoked.id}/accept`)).status, 409);
    assert.equal((await outbox(s, 'organization.membership.removed')).length, 0);
    assert.equal((await auditRows(s, 'organization.invitation.revoked'))[0]?.reason, 'typo');
    // Both may be invited again.
    await invite(s, org.id, { user_id: a });
    await invite(s, org.id, { user_id: b });
  });

  test('case=resend renews the expiry up to limits.invitation_resends times, then 409', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const inv = await invite(s, org.id, { user_id: await newUser(s) });
    const limit = s.h.ctx.config.limits.invitationResends;
    assert.equal(limit, 5);
    for (let i = 1; i <= limit; i++) {
      s.clock.advance(60_000);
      const res = await s.admin.call('POST', `/organizations/${org.id}/invitations/${inv.id}/resend`);
      assert.equal(res.status, 200, `resend ${i}`);
      const b: Body = await body(res);
      assert.equal(b.resend_count, i);
      assert.equal(Date.parse(b.expires_at), s.clock.now().getTime() + 72 * HOUR);
    }
    const res = await s.admin.call('POST', `/organizations/${org.id}/invitations/${inv.id}/resend`);
    assert.equal(res.status, 409);
    assert.equal((await body(res)).code, 'invitation_resend_limit');
    assert.equal((await auditRows(s, 'organization.invitation.resent')).length, limit);
  });

  test('case=reassign ends the old invitation and invites another user with the same roles', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const a = await newUser(s);
    const b = await newUser(s);
    const role = await memberRole(s);
    const inv = await invite(s, org.id, { user_id: a, role_ids: [role] });
    const same = await s.admin.call('POST', `/organizations/${org.id}/invitations/${inv.id}/reassign`, {
      user_id: a,
    });
    assert.equal(same.status, 422);
    s.clock.advance(1); // event ids sort by time
    const res = await s.admin.call('POST', `/organizations/${org.id}/invitations/${inv.id}/reassign`, {
      user_id: b,
    });
    assert.equal(res.status, 201);
    const next: Body = await body(res);
    assert.notEqual(next.id, inv.id);
    assert.equal(next.user_id, b);
    assert.deepEqual(next.role_ids, [role]);
    const [old] = await rows(s.h, 'select state from membership_requests where realm_id = $1 and id = $2', [
      s.realm.id,
      inv.id,
    ]);
    assert.equal(old?.state, 'reassigned');
    assert.equal((await membershipRow(s, inv.membership_id))?.state, 'removed');
    assert.deepEqual(
      (await outbox(s, 'organization.invitation.created')).map((e) => e.data.invitation_id),
      [inv.id, next.id],
    );
    const first = await accountCaller(s, a);
    assert.equal((await first.call('POST', `/me/invitations/${inv.id}/accept`)).status, 409);
    const second = await accountCaller(s, b);
    assert.equal((await second.call('POST', `/me/invitations/${next.id}/accept`)).status, 200);
  });

  test('case=an invitation expires after 72 hours: refused at once, removed by the sweep', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const userId = await newUser(s);
    const inv = await invite(s, org.id, { user_id: userId });
    s.clock.advance(72 * HOUR - 1000);
    await sweepMemberships({ db: s.h.ctx.db }, s.clock.now());
    assert.equal((await membershipRow(s, inv.membership_id))?.state, 'invited', 'a second before expiry');
    s.clock.advance(1000);
    // Callers made now: tokens from before the jump have expired.
    const me = await accountCaller(s, userId);
    const admin = await apiCaller(s.h, s.realm);
    assert.equal((await body(await me.call('GET', '/me/invitations'))).items.length, 0);
    const accept = await me.call('POST', `/me/invitations/${inv.id}/accept`);
    assert.equal(accept.status, 409, 'past its expiry before the sweep ran');
    const listed = await body(await admin.call('GET', `/organizations/${org.id}/invitations`));
    assert.equal(listed.items[0].state, 'expired');
    assert.equal(
      (await admin.call('POST', `/organizations/${org.id}/invitations/${inv.id}/resend`)).status,
      409,
    );
    const report = await sweepMemberships({ db: s.h.ctx.db }, s.clock.now());
    assert.ok((report.invitations_expired ?? 0) >= 1);
    const [req] = await rows(s.h, 'select state from membership_requests where realm_id = $1 and id = $2', [
      s.realm.id,
      inv.id,
    ]);
    assert.equal(req?.state, 'expired');
    assert.equal((await membershipRow(s, inv.membership_id))?.state, 'removed');
    assert.deepEqual(
      (await auditRows(s, 'organization.invitation.expired')).map((a) => a.data.invitation_id),
      [inv.id],
    );
    const again = await admin.call('POST', `/organizations/${org.id}/invitations`, { user_id: userId });
    assert.equal(again.status, 201, 'an expired invitation frees the user for a new one');
  });

  test('case=invitation bodies and unknown ids', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const user = await newUser(s);
    for (const [input, status] of [
      [{}, 422],
      [{ user_id: 'usr_00000000000000000000000000' }, 422],
      [{ user_id: user, message: '' }, 422],
      [{ user_id: user, message: 'm'.repeat(1001) }, 422],
      [{ user_id: user, role_ids: ['rol_00000000000000000000000000'] }, 422],
      [{ email: 'x@example.com' }, 400],
    ] as const) {
      const res = await s.admin.call('POST', `/organizations/${org.id}/invitations`, input);
      assert.equal(res.status, status, JSON.stringify(input).slice(0, 80));
    }
    for (const action of ['resend', 'revoke']) {
      const res = await s.admin.call(
        'POST',
        `/organizations/${org.id}/invitations/inv_00000000000000000000000000/${action}`,
      );
      assert.equal(res.status, 404);
    }
    const other = await createOrg(s);
    const inv = await invite(s, other.id, { user_id: user });
    const res = await s.admin.call('POST', `/organizations/${org.id}/invitations/${inv.id}/revoke`);
    assert.equal(res.status, 404, 'another organization’s invitation is not found under this one');
    const me = await accountCaller(s, user);
    assert.equal((await me.call('POST', `/me/invitations/${inv.id}/accept`, { extra: true })).status, 400);
  });
});

describe('join requests', () => {
  test('case=file then approve: active membership from join_request, no membership event', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const userId = await newUser(s);
    const me = await accountCaller(s, userId);
    const res = await me.call('POST', '/me/join-requests', { organization_id: org.id });
    assert.equal(res.status, 201);
    const jr: Body = await body(res);
    assert.match(jr.id, /^jrq_[0-9a-z]{26}$/);
    assert.equal(Date.parse(jr.expires_at) - s.clock.now().getTime(), 14 * DAY);
    assert.equal((await membershipRow(s, jr.membership_id))?.state, 'pending_approval');
    const [created] = await outbox(s, 'organization.join_request.created');
    assert.deepEqual(created?.data, { join_request_id: jr.id });
    assert.equal(created?.org_id, org.id);
    assert.equal((await me.call('POST', '/me/join-requests', { organization_id: org.id })).status, 409);
    const mine = await body(await me.call('GET', '/me/join-requests'));
    assert.deepEqual(
      mine.items.map((x: Body) => [x.id, x.organization.id]),
      [[jr.id, org.id]],
    );
    const pending = await body(
      await s.admin.call('GET', `/organizations/${org.id}/join-requests?state=pending`),
    );
    assert.deepEqual(
      pending.items.map((x: Body) => x.id),
      [jr.id],
    );
    const eventsBefore = await count(s.h, 'select 1 from outbox where realm_id = $1', [s.realm.id]);
    const ok = await s.admin.call('POST', `/organizations/${org.id}/join-requests/${jr.id}/approve`);
    assert.equal(ok.status, 200);
    const m: Body = await body(ok);
    assert.equal(m.state, 'active');
    assert.equal(m.source, 'join_request');
    assert.equal(await count(s.h, 'select 1 from outbox where realm_id = $1', [s.realm.id]), eventsBefore);
    assert.equal((await auditRows(s, 'organization.join_request.approved')).length, 1);
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/join-requests/${jr.id}/deny`)).status,
      409,
    );
  });

  test('case=deny and withdraw remove the membership; another user’s request is 404', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const a = await accountCaller(s, await newUser(s));
    const b = await accountCaller(s, await newUser(s));
    const ja = await body(await a.call('POST', '/me/join-requests', { organization_id: org.id }));
    const jb = await body(await b.call('POST', '/me/join-requests', { organization_id: org.id }));
    assert.equal((await a.call('POST', `/me/join-requests/${jb.id}/withdraw`)).status, 404);
    const w = await a.call('POST', `/me/join-requests/${ja.id}/withdraw`);
    assert.equal(w.status, 200);
    assert.equal((await body(w)).state, 'withdrawn');
    assert.equal((await membershipRow(s, ja.membership_id))?.state, 'removed');
    const d = await s.admin.call('POST', `/organizations/${org.id}/join-requests/${jb.id}/deny`, {
      reason: 'unknown',
    });
    assert.equal(d.status, 200);
    assert.equal((await body(d)).state, 'denied');
    assert.equal((await membershipRow(s, jb.membership_id))?.state, 'removed');
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/join-requests/${jb.id}/approve`)).status,
      409,
    );
    assert.equal((await a.call('POST', `/me/join-requests/${ja.id}/withdraw`)).status, 409);
    // A removed membership does not block a new request.
    assert.equal((await a.call('POST', '/me/join-requests', { organization_id: org.id })).status, 201);
  });

  test('case=only active organizations take requests; unknown or deleting ones are 404', async (t) => {
    const s = await setup(t);
    const suspended = await createOrg(s);
    const deleting = await createOrg(s);
    await s.admin.call('POST', `/organizations/${suspended.id}/suspend`);
    await s.admin.call('DELETE', `/organizations/${deleting.id}`);
    const me = await accountCaller(s, await newUser(s));
    const post = (organization_id: unknown) => me.call('POST', '/me/join-requests', { organization_id });
    assert.equal((await post('org_00000000000000000000000000')).status, 404);
    assert.equal((await post(deleting.id)).status, 404);
    assert.equal((await post(suspended.id)).status, 409);
    assert.equal((await post('nope')).status, 422);
    assert.equal((await post(42)).status, 400);
  });

  test('case=a join request expires after 14 days through the sweep', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const me = await accountCaller(s, await newUser(s));
    const jr = await body(await me.call('POST', '/me/join-requests', { organization_id: org.id }));
    s.clock.advance(14 * DAY - 1000);
    await sweepMemberships({ db: s.h.ctx.db }, s.clock.now());
    assert.equal(
      (await membershipRow(s, jr.membership_id))?.state,
      'pending_approval',
      'a second before expiry',
    );
    s.clock.advance(1000);
    const admin = await apiCaller(s.h, s.realm);
    assert.equal(
      (await admin.call('POST', `/organizations/${org.id}/join-requests/${jr.id}/approve`)).status,
      409,
    );
    assert.ok(((await sweepMemberships({ db: s.h.ctx.db }, s.clock.now())).join_requests_expired ?? 0) >= 1);
    assert.equal((await membershipRow(s, jr.membership_id))?.state, 'removed');
    const listed = await body(await admin.call('GET', `/organizations/${org.id}/join-requests`));
    assert.equal(listed.items[0].state, 'expired');
  });
});
