// Access reviews (docs/access-reviews.md): a campaign over a realm role's holders or an
// organization's members, decided by named reviewers, applied by task access_reviews.close at its
// end: removals through the roles and organizations contexts' own changes, undecided items by the
// campaign's default, everything audited.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { closeDueReviews } from '../../../src/reviews/access-reviews.close.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { createRole, send } from '../roles/roles-kit.ts';

const DAY = 86_400_000;

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const reviewer = await apiCaller(h, realm, { roles: [] });
  const roleId = await createRole(admin, { name: 'billing-admin', permissions: ['realm.users.read'] });
  const holders: string[] = [];
  for (let i = 0; i < 3; i++) {
    const u = await h.createUser(realm, {
      email: `holder-${i}@example.com`,
      password: 'correct horse battery',
    });
    const a = await send(admin, 'POST', '/role-assignments', {
      role_id: roleId,
      subject_type: 'user',
      subject_id: u.id,
      scope_type: 'realm',
    });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    holders.push(u.id);
  }
  const api = (who: ApiCallerKit) => (method: string, path: string, body?: unknown) =>
    send(who, method, path, body);
  const close = () => closeDueReviews({ db: h.ctx.db }, h.clock.now());
  const assignmentsOf = async (userId: string) =>
    (
      await h.ctx.db.query<{ id: string }>(
        'select id from role_assignments where realm_id = $1 and subject_id = $2 and role_id = $3',
        [realm.id, userId, roleId],
      )
    ).rows.length;
  return { h, realm, admin, reviewer, roleId, holders, as: api, close, assignmentsOf };
}

test('case=a role campaign: reviewers decide, the close removes what they removed and applies the default to the rest', async (t) => {
  const s = await setup(t);
  const [keep, remove, undecided] = s.holders as [string, string, string];
  const made = await s.as(s.admin)('POST', '/access-reviews', {
    name: 'Q4 billing admins',
    scope: { type: 'role', id: s.roleId },
    reviewer_ids: [s.reviewer.userId],
    ends_at: new Date(s.h.clock.now().getTime() + 7 * DAY).toISOString(),
    default_decision: 'remove',
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.deepEqual([made.body.state, made.body.items, made.body.decided], ['open', 3, 0]);
  const id = made.body.id as string;

  const rev = s.as(s.reviewer);
  const items = await rev('GET', `/access-reviews/${id}/items`);
  assert.equal(items.status, 200);
  const itemOf = (userId: string) =>
    (items.body.items as { id: string; user_id: string }[]).find((i) => i.user_id === userId)?.id as string;
  assert.equal(
    (await rev('PUT', `/access-reviews/${id}/items/${itemOf(keep)}/decision`, { decision: 'keep' })).status,
    204,
  );
  assert.equal(
    (
      await rev('PUT', `/access-reviews/${id}/items/${itemOf(remove)}/decision`, {
        decision: 'remove',
        reason: 'left the finance team',
      })
    ).status,
    204,
  );
  // Not a reviewer: refused, and unable to read the campaign.
  const stranger = await apiCaller(s.h, s.realm, { roles: [] });
  assert.equal(
    (
      await s.as(stranger)('PUT', `/access-reviews/${id}/items/${itemOf(keep)}/decision`, {
        decision: 'remove',
      })
    ).status,
    403,
  );
  assert.equal((await s.as(stranger)('GET', `/access-reviews/${id}`)).status, 404);

  // Not due yet: nothing happens.
  assert.deepEqual(await s.close(), { closed: 0, failed: 0 });
  s.h.clock.advance(7 * DAY + 1000);
  // A week later the callers sign in again; too late to decide now.
  const revLater = s.as(await apiCaller(s.h, s.realm, { userId: s.reviewer.userId, roles: [] }));
  const adminLater = s.as(await apiCaller(s.h, s.realm));
  assert.equal(
    (await revLater('PUT', `/access-reviews/${id}/items/${itemOf(undecided)}/decision`, { decision: 'keep' }))
      .status,
    409,
  );
  assert.deepEqual(await s.close(), { closed: 1, failed: 0 });
  assert.deepEqual(
    [await s.assignmentsOf(keep), await s.assignmentsOf(remove), await s.assignmentsOf(undecided)],
    [1, 0, 0],
  );
  const closed = await adminLater('GET', `/access-reviews/${id}`);
  assert.equal(closed.body.state, 'closed');
  assert.deepEqual(closed.body.result, { kept: 1, removed: 1, removed_by_default: 1 });
  const audit = await s.h.ctx.db.query<{ type: string }>(
    `select type from audit_events where realm_id = $1 and (type like 'access_review.%' or type = 'role.unassigned')
      order by occurred_at, id`,
    [s.realm.id],
  );
  // The close's records share one clock reading, so they are compared as a set.
  assert.deepEqual(audit.rows.map((r) => r.type).sort(), [
    'access_review.closed',
    'access_review.created',
    'access_review.decided',
    'access_review.decided',
    'role.unassigned',
    'role.unassigned',
  ]);
  // A second run finds nothing more to do.
  assert.deepEqual(await s.close(), { closed: 0, failed: 0 });
});

test('case=an organization campaign closed early; a reviewer never decides their own access', async (t) => {
  const s = await setup(t);
  const org = await seedOrganization(s.h, s.realm);
  const [a, b] = s.holders as [string, string];
  await seedMembership(s.h, s.realm, org, a);
  await seedMembership(s.h, s.realm, org, b);
  await seedMembership(s.h, s.realm, org, s.reviewer.userId);
  const made = await s.as(s.admin)('POST', '/access-reviews', {
    name: 'Acme members',
    scope: { type: 'organization', id: org },
    reviewer_ids: [s.reviewer.userId],
    ends_at: new Date(s.h.clock.now().getTime() + 30 * DAY).toISOString(),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.deepEqual([made.body.items, made.body.default_decision], [3, 'keep']);
  const id = made.body.id as string;
  const rev = s.as(s.reviewer);
  const items = (await rev('GET', `/access-reviews/${id}/items`)).body.items as {
    id: string;
    user_id: string;
  }[];
  const own = items.find((i) => i.user_id === s.reviewer.userId)?.id as string;
  assert.equal(
    (await rev('PUT', `/access-reviews/${id}/items/${own}/decision`, { decision: 'keep' })).status,
    403,
  );
  const bItem = items.find((i) => i.user_id === b)?.id as string;
  assert.equal(
    (await rev('PUT', `/access-reviews/${id}/items/${bItem}/decision`, { decision: 'remove' })).status,
    204,
  );
  // Closed early by an administrator: the next run applies it.
  const early = await s.as(s.admin)('POST', `/access-reviews/${id}/close`);
  assert.equal(early.status, 202);
  assert.equal(early.body.state, 'closing');
  assert.deepEqual(await s.close(), { closed: 1, failed: 0 });
  const live = await s.h.ctx.db.query<{ user_id: string }>(
    `select user_id from memberships where realm_id = $1 and organization_id = $2 and state = 'active' order by user_id`,
    [s.realm.id, org],
  );
  assert.deepEqual(
    live.rows.map((r) => r.user_id),
    [a, s.reviewer.userId].sort(),
  );
  const result = (await s.as(s.admin)('GET', `/access-reviews/${id}`)).body.result;
  assert.deepEqual(result, { kept_by_default: 2, removed: 1 });
});

test('case=bad requests: the limits and the permission', async (t) => {
  const s = await setup(t);
  const create = (body: unknown, who = s.admin) => s.as(who)('POST', '/access-reviews', body);
  const base = {
    name: 'r',
    scope: { type: 'role', id: s.roleId },
    reviewer_ids: [s.reviewer.userId],
    ends_at: new Date(s.h.clock.now().getTime() + DAY).toISOString(),
  };
  const tooMany = Array.from({ length: 21 }, (_, i) => `usr_${String(i).padStart(26, '0')}`);
  const cases: [unknown, number, string][] = [
    [{ ...base, reviewer_ids: [] }, 422, 'reviewer_ids'],
    [{ ...base, reviewer_ids: tooMany }, 422, 'reviewer_ids'],
    [{ ...base, reviewer_ids: ['usr_00000000000000000000000000'] }, 422, 'reviewer_ids[0]'],
    [{ ...base, ends_at: new Date(s.h.clock.now().getTime() - 1000).toISOString() }, 422, 'ends_at'],
    [{ ...base, ends_at: new Date(s.h.clock.now().getTime() + 181 * DAY).toISOString() }, 422, 'ends_at'],
    [{ ...base, default_decision: 'maybe' }, 422, 'default_decision'],
    [{ ...base, extra: 1 }, 400, 'extra'],
  ];
  for (const [body, status, field] of cases) {
    const r = await create(body);
    assert.equal(r.status, status, `${field}: ${JSON.stringify(r.body)}`);
    assert.ok(
      (r.body.errors as { field: string }[] | undefined)?.some((e) => e.field === field),
      `${field}: ${JSON.stringify(r.body)}`,
    );
  }
  assert.equal(
    (await create({ ...base, scope: { type: 'role', id: 'rol_00000000000000000000000000' } })).status,
    404,
  );
  // Managing campaigns needs realm.access_reviews.manage.
  assert.equal((await create(base, s.reviewer)).status, 403);
  assert.equal((await s.as(s.reviewer)('GET', '/access-reviews')).status, 403);
});
