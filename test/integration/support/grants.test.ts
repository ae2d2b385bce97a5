// Creating, reading and ending support grants (docs/support-access.md, "Support grants" and
// "Customer side").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { grantBody, type SupportKit, supportKit, TICKETS, TOOL } from './support-kit.ts';

test('a grant is active at once; the answer shows the handoff code once; started event and audit', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const orgId = await k.organizationFor(customer);
  const now = k.clock.now().getTime();
  const r = await k.grant(
    grantBody(customer, { organization_id: orgId, scopes: ['tickets:read', 'tickets:write'], write: true }),
  );
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.match(r.body.id, /^sgr_[0-9a-z]{26}$/);
  assert.match(r.body.handoff_code, /^pa_sh_[A-Za-z0-9_-]{43}$/);
  assert.equal(r.body.state, 'active');
  assert.equal(r.body.target_user_id, customer);
  assert.equal(r.body.actor_user_id, k.admin.userId);
  assert.equal(r.body.client_id, TOOL);
  assert.equal(r.body.resource, TICKETS);
  assert.deepEqual(r.body.scopes, ['tickets:read', 'tickets:write']);
  assert.equal(r.body.write, true);
  assert.equal(r.body.organization_id, orgId);
  // Default and maximum: 5 minutes.
  assert.equal(Date.parse(r.body.expires_at), now + 300_000);

  const read = await json(await k.admin.call('GET', `/support-grants/${r.body.id}`));
  assert.equal(read.status, 200);
  assert.equal(read.body.handoff_code, undefined);
  const stored = await k.h.ctx.db.query<{ handoff_digest: string }>(
    'select handoff_digest from support_grants where realm_id = $1 and id = $2',
    [k.realm.id, r.body.id],
  );
  assert.notEqual(stored.rows[0]?.handoff_digest, r.body.handoff_code);

  const started = await k.events('support.impersonation.started');
  assert.deepEqual(started, [
    {
      org_id: orgId,
      data: {
        grant_id: r.body.id,
        actor_user_id: k.admin.userId,
        target_user_id: customer,
        expires_at: r.body.expires_at,
      },
    },
  ]);
  const audits = await k.audits('support.grant.created');
  assert.equal(audits[0]?.signal, 'impersonation_activity');
  const alerts = await k.events('security.alert');
  assert.ok(alerts.some((a) => a.data.signal === 'impersonation_activity'));
});

test('refusals: self, protected, privileged, not active, opted out; each audited with impersonation_denied', async (t) => {
  const k = await supportKit(t);
  const db = k.h.ctx.db;
  const refuse = async (userId: string, reason: string) => {
    const r = await k.grant(grantBody(userId));
    assert.equal(r.status, 403, `${reason}: ${JSON.stringify(r.body)}`);
    // The clock stands still, so ids of one millisecond do not sort by time: match the subject.
    const last = (await k.audits('support.grant.denied')).find((a) => a.subject_id === userId);
    assert.equal(last?.reason, reason);
    assert.equal(last?.signal, 'impersonation_denied');
    assert.equal(last?.outcome, 'failure');
  };
  await refuse(k.admin.userId, 'self');
  const guarded = await k.customer();
  await db.query('update users set protected = true where realm_id = $1 and id = $2', [k.realm.id, guarded]);
  await refuse(guarded, 'protected_account');
  const otherAdmin = await apiCaller(k.h, k.realm);
  await refuse(otherAdmin.userId, 'privileged_account');
  const suspended = await k.customer();
  await db.query("update users set state = 'suspended' where realm_id = $1 and id = $2", [
    k.realm.id,
    suspended,
  ]);
  await refuse(suspended, 'account_not_active');
  const private_ = await k.customer();
  const account = await k.accountOf(private_);
  assert.equal((await account.call('PUT', '/me/support-access', { allowed: false })).status, 200);
  await refuse(private_, 'opted_out');
  const alerts = await k.events('security.alert');
  assert.equal(alerts.filter((a) => a.data.signal === 'impersonation_denied').length, 5);
  assert.deepEqual(await k.events('support.impersonation.started'), []);
});

test('request rules: scopes within the policy, write scopes only with write, listed tool, a live organization always', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const code = async (over: Record<string, unknown>) => {
    const r = await k.grant(grantBody(customer, over));
    return { status: r.status, codes: (r.body.errors ?? []).map((e: { code: string }) => e.code) };
  };
  assert.deepEqual(await code({ scopes: ['admin:all'] }), { status: 422, codes: ['not_allowed'] });
  assert.deepEqual(await code({ scopes: ['tickets:write'] }), { status: 422, codes: ['write_required'] });
  assert.deepEqual(await code({ client_id: 'web-app' }), { status: 422, codes: ['not_allowed'] });
  assert.deepEqual(await code({ ttl_seconds: 301 }), { status: 422, codes: ['too_large'] });
  assert.deepEqual(await code({ reason: '' }), { status: 422, codes: ['too_short'] });
  assert.deepEqual(await code({ resource: 'https://unknown.example.test' }), {
    status: 422,
    codes: ['unknown'],
  });
  assert.equal((await code({ surprise: 1 })).status, 400);
  const stranger = await k.organizationFor(await k.customer());
  assert.deepEqual(await code({ organization_id: stranger }), {
    status: 422,
    codes: ['membership_inactive'],
  });
  // Every grant names an organization, whether or not the resource requires one.
  assert.deepEqual(await code({ organization_id: undefined }), { status: 422, codes: ['required'] });
  const suspendedOrg = await k.organizationFor(customer);
  await k.h.ctx.db.query("update organizations set state = 'suspended' where realm_id = $1 and id = $2", [
    k.realm.id,
    suspendedOrg,
  ]);
  assert.deepEqual(await code({ organization_id: suspendedOrg }), {
    status: 422,
    codes: ['membership_inactive'],
  });
  assert.deepEqual(await code({ organization_id: 'org_unknown' }), {
    status: 422,
    codes: ['membership_inactive'],
  });
});

test('approval other than none is refused with 409 until approvals exist', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  await k.h.setPolicy(k.realm, {
    impersonation: { approval: 'customer', notify_customer: true, allow_customer_opt_out: true },
  });
  const r = await k.grant(grantBody(customer));
  assert.equal(r.status, 409, JSON.stringify(r.body));
  assert.match(r.body.detail, /approval/);
});

test('creating a grant needs support.impersonate and a recent sign-in', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const plain = await apiCaller(k.h, k.realm, { roles: ['resource-server'] });
  assert.equal((await k.grant(grantBody(customer), plain)).status, 403);
  const stale = await apiCaller(k.h, k.realm);
  // Past the recent-authentication window (10 minutes); the refreshed token keeps the old auth_time.
  k.h.clock.advance(11 * 60_000);
  const r = await k.grant(grantBody(customer), stale);
  assert.equal(r.status, 403);
  assert.equal(r.body.code, 'step_up_required');
});

test('lists: support staff see every grant, others only their own; the customer sees grants on their account', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const mine = await k.grant(grantBody(customer));
  const colleague = await apiCaller(k.h, k.realm);
  const theirs = await k.grant(grantBody(customer), colleague);
  assert.equal(theirs.status, 201);
  const all = await json(await k.admin.call('GET', '/support-grants'));
  assert.deepEqual(
    all.body.items.map((g: { id: string }) => g.id).sort(),
    [mine.body.id, theirs.body.id].sort(),
  );
  const filtered = await json(await k.admin.call('GET', `/support-grants?actor_user_id=${colleague.userId}`));
  assert.deepEqual(
    filtered.body.items.map((g: { id: string }) => g.id),
    [theirs.body.id],
  );
  const paged = await json(await k.admin.call('GET', '/support-grants?limit=1'));
  assert.equal(paged.body.items.length, 1);
  const next = await json(
    await k.admin.call('GET', `/support-grants?limit=1&cursor=${paged.body.next_cursor}`),
  );
  assert.equal(next.body.items.length, 1);
  assert.notEqual(next.body.items[0].id, paged.body.items[0].id);

  // Someone without support.impersonate sees only grants they made (none here).
  const other = await apiCaller(k.h, k.realm, { roles: ['resource-server'] });
  assert.deepEqual((await json(await other.call('GET', '/support-grants'))).body.items, []);
  assert.equal((await other.call('GET', `/support-grants/${mine.body.id}`)).status, 404);
  assert.equal((await other.call('POST', `/support-grants/${mine.body.id}/revoke`, {})).status, 404);

  const account = await k.accountOf(customer);
  const own = await json(await account.call('GET', '/me/support-grants'));
  assert.equal(own.status, 200);
  assert.equal(own.body.items.length, 2);
  assert.equal(own.body.items[0].handoff_code, undefined);
  // The colleague (support staff) may end the admin's grant, as an administrator.
  const ended = await colleague.call('POST', `/support-grants/${mine.body.id}/revoke`, {});
  assert.equal(ended.status, 200);
  const reasons = (await k.events('support.impersonation.ended')).map((e) => e.data.reason);
  assert.deepEqual(reasons, ['administrator']);
});

test('opt-out: stored, ends live grants, and is 409 where the realm does not allow it', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const g = await k.grant(grantBody(customer));
  const token = (await k.handoff(g.body.handoff_code)).body.access_token as string;
  const account = await k.accountOf(customer);
  const view = await json(await account.call('GET', '/me/support-access'));
  assert.deepEqual(view.body, { allowed: true, opt_out_allowed: true });
  const out = await json(await account.call('PUT', '/me/support-access', { allowed: false }));
  assert.deepEqual(out.body, { allowed: false, grants_revoked: 1 });
  assert.deepEqual((await k.introspect(token)).body, { active: false });
  assert.deepEqual(
    (await k.events('support.impersonation.ended')).map((e) => e.data),
    [{ grant_id: g.body.id, reason: 'customer_opt_out' }],
  );
  assert.equal((await k.grant(grantBody(customer))).status, 403);
  const back = await json(await account.call('PUT', '/me/support-access', { allowed: true }));
  assert.deepEqual(back.body, { allowed: true, grants_revoked: 0 });
  assert.equal((await k.grant(grantBody(customer))).status, 201);

  await k.h.setPolicy(k.realm, {
    impersonation: { approval: 'none', notify_customer: true, allow_customer_opt_out: false },
  });
  assert.equal((await account.call('PUT', '/me/support-access', { allowed: false })).status, 409);
});

/** Until `n` statements of this database wait for a lock (at most 10 s). */
async function lockWaiters(k: SupportKit, n: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const r = await k.h.ctx.db.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if ((r.rows[0]?.n ?? 0) >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`fewer than ${n} statements wait for a lock`);
}

test('opting out while a grant is being created ends that grant', {
  skip: TEST_DATABASE_URL ? false : 'PGlite runs one transaction at a time: nothing to race',
}, async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const account = await k.accountOf(customer);
  // A stored choice: updating it, unlike a first insert, takes no foreign-key lock on the customer.
  assert.equal((await account.call('PUT', '/me/support-access', { allowed: true })).status, 200);
  // Holding the support user's row stops the creation at its insert (the foreign key check),
  // after it has locked the customer and found no opt-out.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let taken = () => {};
  const lockTaken = new Promise<void>((resolve) => {
    taken = resolve;
  });
  const holder = k.h.ctx.db.tx(async (tx) => {
    await tx.query('select 1 from users where realm_id = $1 and id = $2 for update', [
      k.realm.id,
      k.admin.userId,
    ]);
    taken();
    await held;
  });
  await lockTaken;
  const creating = k.grant(grantBody(customer));
  await lockWaiters(k, 1);
  const optingOut = account.call('PUT', '/me/support-access', { allowed: false }).then(json);
  // The opt-out waits for the creation's lock on the customer (or, unfixed, ends at once).
  await Promise.race([optingOut, lockWaiters(k, 2)]);
  release();
  await holder;
  const created = await creating;
  const out = await optingOut;
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.deepEqual(out.body, { allowed: false, grants_revoked: 1 });
  const row = await k.h.ctx.db.query<{ state: string; revoked_reason: string }>(
    'select state, revoked_reason from support_grants where realm_id = $1 and id = $2',
    [k.realm.id, created.body.id],
  );
  assert.deepEqual({ ...row.rows[0] }, { state: 'revoked', revoked_reason: 'customer_opt_out' });
});
