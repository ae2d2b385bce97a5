// Decisions about support tokens (docs/authorization.md, "Support access"): the resource's
// impersonation_policy decides what support may do as the customer, and the customer's own roles
// decide the rest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { supportKit, supportToken } from './support-kit.ts';

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
