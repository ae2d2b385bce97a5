// Decisions about support tokens (docs/authorization.md, "Support access"): the resource's
// impersonation_policy decides what support may do as the customer, and the customer's own roles
// decide the rest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { grantBody, homeOrgOf, supportKit, supportToken } from './support-kit.ts';

test('support decisions: reads pass, writes need a write grant and the allow-list, built-in and privileged actions never', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const reader = await supportToken(k, customer, { scopes: ['tickets:read', 'billing:read'] });
  const writer = await supportToken(k, customer, { scopes: ['tickets:read', 'tickets:write'], write: true });

  const expect = async (token: string, action: string, code: string) => {
    const r = await k.check(token, action);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.reason_code, code, `${action}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.allowed, code === 'ALLOWED', action);
  };
  await expect(reader.token, 'tickets.read', 'ALLOWED');
  await expect(reader.token, 'billing.read', 'ALLOWED');
  await expect(reader.token, 'tickets.update', 'SUPPORT_ACCESS_READ_ONLY');
  await expect(writer.token, 'tickets.update', 'ALLOWED');
  await expect(writer.token, 'tickets.close', 'SUPPORT_ACCESS_WRITE_NOT_ALLOWLISTED');
  // An action no read-only support scope names is a write.
  await expect(reader.token, 'tickets.delete', 'SUPPORT_ACCESS_READ_ONLY');
  await expect(writer.token, 'billing.refund', 'SUPPORT_ACCESS_FORBIDDEN_ACTION');
  await expect(reader.token, 'realm.users.read', 'SUPPORT_ACCESS_FORBIDDEN_ACTION');
  await expect(writer.token, 'org.members.write', 'SUPPORT_ACCESS_FORBIDDEN_ACTION');
  await expect(reader.token, 'support.impersonate', 'SUPPORT_ACCESS_FORBIDDEN_ACTION');
});

test('past the support rules the customer’s own roles decide', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { token } = await supportToken(k, customer, { scopes: ['tickets:read'] });
  assert.equal((await k.check(token, 'tickets.read')).body.reason_code, 'ALLOWED');
  await k.h.ctx.db.query('delete from role_assignments where realm_id = $1 and subject_id = $2', [
    k.realm.id,
    customer,
  ]);
  assert.equal((await k.check(token, 'tickets.read')).body.reason_code, 'NOT_PERMITTED');
});

test('a support token whose grant ended answers SUBJECT_TOKEN_INACTIVE', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { grant, token } = await supportToken(k, customer);
  const revoked = await k.admin.call('POST', `/support-grants/${grant.id}/revoke`, {});
  assert.equal(revoked.status, 200);
  const r = await k.check(token, 'tickets.read');
  assert.equal(r.body.reason_code, 'SUBJECT_TOKEN_INACTIVE');
});

test('support answers are not cached: cache_ttl_seconds is 0', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const { token } = await supportToken(k, customer, { scopes: ['tickets:read'] });
  for (const action of ['tickets.read', 'tickets.update', 'realm.users.read']) {
    const r = await k.check(token, action);
    assert.equal(r.body.cache_ttl_seconds, 0, action);
  }
});

test('a support token reaches only what the scopes it carries require', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const reader = await supportToken(k, customer, { scopes: ['tickets:read'] });
  // billing:read is a support read scope, but this token does not carry it.
  assert.equal(
    (await k.check(reader.token, 'billing.read')).body.reason_code,
    'SUPPORT_ACCESS_FORBIDDEN_ACTION',
  );
  assert.equal((await k.check(reader.token, 'tickets.read')).body.reason_code, 'ALLOWED');

  // A write grant whose token was narrowed to the read scope at the handoff writes nothing.
  const g = await k.grant(grantBody(customer, { scopes: ['tickets:read', 'tickets:write'], write: true }));
  const narrowed = await k.handoff(g.body.handoff_code, { scope: 'tickets:read' });
  assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
  const token = narrowed.body.access_token as string;
  assert.equal((await k.check(token, 'tickets.update')).body.reason_code, 'SUPPORT_ACCESS_FORBIDDEN_ACTION');
  assert.equal((await k.check(token, 'tickets.read')).body.reason_code, 'ALLOWED');
});

test('a support token acts in its grant’s organization only', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const elsewhere = await k.organizationFor(customer);
  const { token } = await supportToken(k, customer);
  const home = { type: 'ticket', id: 't1', org_id: homeOrgOf(customer) };
  assert.equal((await k.check(token, 'tickets.read', home)).body.reason_code, 'ALLOWED');
  const r = await k.check(token, 'tickets.read', { type: 'ticket', id: 't1', org_id: elsewhere });
  assert.equal(r.body.reason_code, 'ORGANIZATION_MISMATCH');
});

test('list-objects applies the carried scopes too', async (t) => {
  const k = await supportKit(t);
  const caller = await apiCaller(k.h, k.realm, { roles: ['realm-admin', 'resource-server'] });
  // A relationship type and a support read scope that requires its permission.
  await k.h.ctx.db.query(
    `update resources set scopes = scopes || $3::jsonb,
       impersonation_policy = jsonb_set(impersonation_policy, '{allowedScopes}',
         (impersonation_policy -> 'allowedScopes') || '["docs:read"]')
     where realm_id = $1 and id = $2`,
    [k.realm.id, k.resourceId, JSON.stringify([{ name: 'docs:read', requiredPermissions: ['view'] }])],
  );
  const put = await caller.call('PUT', '/authorization/types/doc', {
    relations: { viewer: ['user'] },
    permissions: { view: 'viewer' },
  });
  assert.equal(put.status, 201, await put.clone().text());
  const customer = await k.customer();
  const tuples = await caller.call('POST', '/authorization/tuples', {
    writes: [
      { object_type: 'doc', object_id: 'd', relation: 'viewer', subject_type: 'user', subject_id: customer },
    ],
    deletes: [],
  });
  assert.equal(tuples.status, 200, await tuples.clone().text());
  const list = async (token: string) =>
    (
      await json(
        await caller.call('POST', '/authorization/list-objects', {
          subject_token: token,
          action: 'view',
          resource_type: 'doc',
        }),
      )
    ).body;
  const without = await supportToken(k, customer, { scopes: ['tickets:read'] });
  assert.deepEqual(await list(without.token), {
    objects: [],
    next_cursor: null,
    reason_code: 'SUPPORT_ACCESS_FORBIDDEN_ACTION',
  });
  const carrying = await supportToken(k, customer, { scopes: ['docs:read'] });
  assert.deepEqual((await list(carrying.token)).objects, ['d']);
});
