// Support tokens at introspection (docs/support-access.md, "Live checks"): active only while the
// grant is active and unexpired, the customer's account live and the resource still accepting
// support access.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type SupportKit, supportKit, supportToken } from './support-kit.ts';

async function activeThenInactive(k: SupportKit, token: string, end: () => Promise<void>) {
  const before = await k.introspect(token);
  assert.equal(before.body.active, true, JSON.stringify(before.body));
  await end();
  const after = await k.introspect(token);
  assert.deepEqual(after.body, { active: false });
}

test('introspection shows a live support token with act and support_grant_id', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { grant, token } = await supportToken(k, customer);
  const r = await k.introspect(token);
  assert.equal(r.status, 200);
  assert.equal(r.body.active, true);
  assert.equal(r.body.sub, customer);
  assert.deepEqual(r.body.act, { sub: k.admin.userId });
  assert.equal(r.body.support_grant_id, grant.id);
  assert.equal(r.body.scope, 'tickets:read');
});

test('revoked by the support user: inactive, ended event with reason actor', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { grant, token } = await supportToken(k, customer);
  await activeThenInactive(k, token, async () => {
    const r = await k.admin.call('POST', `/support-grants/${grant.id}/revoke`, { reason: 'done' });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { state: string }).state, 'revoked');
  });
  assert.deepEqual(
    (await k.events('support.impersonation.ended')).map((e) => e.data),
    [{ grant_id: grant.id, reason: 'actor' }],
  );
  const again = await k.admin.call('POST', `/support-grants/${grant.id}/revoke`, {});
  assert.equal(again.status, 409);
});

test('revoked by the customer: inactive, reason customer', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { grant, token } = await supportToken(k, customer);
  const account = await k.accountOf(customer);
  await activeThenInactive(k, token, async () => {
    const r = await account.call('POST', `/me/support-grants/${grant.id}/revoke`);
    assert.equal(r.status, 200);
  });
  assert.deepEqual(
    (await k.events('support.impersonation.ended')).map((e) => e.data),
    [{ grant_id: grant.id, reason: 'customer' }],
  );
  // Another account cannot see or end it.
  const stranger = await k.accountOf(await k.customer());
  assert.equal((await stranger.call('POST', `/me/support-grants/${grant.id}/revoke`)).status, 404);
});

test('an account-wide revocation ends support grants on the account (reason account_revoked)', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { grant, token } = await supportToken(k, customer);
  await activeThenInactive(k, token, async () => {
    const r = await k.admin.call('POST', `/users/${customer}/revoke-sessions`, {});
    assert.equal(r.status, 200, await r.clone().text());
  });
  assert.deepEqual(
    (await k.events('support.impersonation.ended')).map((e) => e.data),
    [{ grant_id: grant.id, reason: 'account_revoked' }],
  );
  const row = await k.h.ctx.db.query<{ state: string }>(
    'select state from support_grants where realm_id = $1 and id = $2',
    [k.realm.id, grant.id],
  );
  assert.equal(row.rows[0]?.state, 'revoked');
});

test('suspending the customer makes the token inactive at once', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { token } = await supportToken(k, customer);
  await activeThenInactive(k, token, async () => {
    const r = await k.admin.call('POST', `/users/${customer}/suspend`, { reason: 'fraud' });
    assert.equal(r.status, 200, await r.clone().text());
  });
});

test('expiry: inactive once the grant has expired, with no event', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { grant, token } = await supportToken(k, customer, { ttl_seconds: 60 });
  await activeThenInactive(k, token, async () => {
    k.clock.advance(61_000);
  });
  assert.deepEqual(await k.events('support.impersonation.ended'), []);
  const read = await k.admin.call('GET', `/support-grants/${grant.id}`);
  assert.equal(((await read.json()) as { state: string }).state, 'expired');
});

test('a resource that stops accepting support access takes its support tokens with it', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { token } = await supportToken(k, customer);
  await activeThenInactive(k, token, async () => {
    await k.h.ctx.db.query(
      'update resources set impersonation_enabled = false where realm_id = $1 and id = $2',
      [k.realm.id, k.resourceId],
    );
  });
});

test('opaque support tokens carry the grant in their stored claims and follow it the same way', async (t) => {
  const k = await supportKit(t);
  await k.h.ctx.db.query("update resources set token_format = 'opaque' where realm_id = $1 and id = $2", [
    k.realm.id,
    k.resourceId,
  ]);
  const customer = await k.customer();
  const { grant, token } = await supportToken(k, customer);
  assert.match(token, /^pa_at_/);
  const r = await k.introspect(token);
  assert.equal(r.body.support_grant_id, grant.id);
  assert.equal((await k.check(token, 'tickets.update')).body.reason_code, 'SUPPORT_ACCESS_READ_ONLY');
  await activeThenInactive(k, token, async () => {
    const account = await k.accountOf(customer);
    assert.equal((await account.call('POST', '/me/sessions/revoke-all', {})).status, 200);
  });
});

test('delisting the support tool from support_client_ids ends its live tokens', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { token } = await supportToken(k, customer);
  await activeThenInactive(k, token, async () => {
    await k.h.ctx.db.query(
      `update resources set impersonation_policy = jsonb_set(impersonation_policy, '{supportClientIds}', '[]')
        where realm_id = $1 and id = $2`,
      [k.realm.id, k.resourceId],
    );
  });
  assert.equal((await k.check(token, 'tickets.read')).body.reason_code, 'SUBJECT_TOKEN_INACTIVE');
});
