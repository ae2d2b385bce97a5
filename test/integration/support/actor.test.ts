// The support user's side of a grant (docs/support-access.md, "Live checks" and "Ending grants"):
// an account-wide revocation of the support user ends the grants they hold, their support tokens
// die with their account, and a support user who lost support.impersonate redeems nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { grantBody, homeOrgOf, type SupportKit, supportKit, supportToken } from './support-kit.ts';

type Cause = (k: SupportKit, actor: ApiCallerKit) => Promise<Response>;

const CAUSES: Record<string, Cause> = {
  suspend: (k, a) => k.admin.call('POST', `/users/${a.userId}/suspend`, { reason: 'left the team' }),
  lock: (k, a) => k.admin.call('POST', `/users/${a.userId}/lock`, { reason: 'investigation' }),
  'administrator session revocation': (k, a) =>
    k.admin.call('POST', `/users/${a.userId}/revoke-sessions`, {}),
  'password compromised': (k, a) =>
    k.admin.call('POST', `/users/${a.userId}/credentials/password/compromised`, {}),
  'logout everywhere': async (k, a) =>
    (await k.accountOf(a.userId)).call('POST', '/me/sessions/revoke-all', {}),
  deletion: (k, a) => k.admin.call('DELETE', `/users/${a.userId}`),
};

for (const [name, cause] of Object.entries(CAUSES)) {
  test(`${name} of the support user ends their grants (actor_revoked) and their support tokens`, async (t) => {
    const k = await supportKit(t);
    // Only an account with a password can have it marked compromised.
    const password = 'a long enough passphrase 4711';
    const userId =
      name === 'password compromised'
        ? (await k.h.createUser(k.realm, { email: `agent-${Date.now()}@example.com`, password })).id
        : undefined;
    const actor = await apiCaller(k.h, k.realm, userId === undefined ? {} : { userId, password });
    const customer = await k.customer();
    const { grant, token } = await supportToken(k, customer, {}, actor);
    assert.equal((await k.introspect(token)).body.active, true);

    const r = await cause(k, actor);
    assert.ok(r.status < 300, `${r.status} ${await r.clone().text()}`);

    assert.deepEqual((await k.introspect(token)).body, { active: false });
    const row = await k.h.ctx.db.query<{ state: string; revoked_reason: string }>(
      'select state, revoked_reason from support_grants where realm_id = $1 and id = $2',
      [k.realm.id, grant.id],
    );
    assert.deepEqual({ ...row.rows[0] }, { state: 'revoked', revoked_reason: 'actor_revoked' });
    const ended = await k.eventRows('support.impersonation.ended');
    assert.equal(ended.length, 1);
    assert.deepEqual(ended[0]?.data, { grant_id: grant.id, reason: 'actor_revoked' });
    assert.equal(ended[0]?.org_id, homeOrgOf(customer));
    // The ended event belongs to the request that revoked the account, as its audit record does.
    const correlationId = ended[0]?.correlation_id;
    assert.ok(correlationId);
    const audits = await k.h.ctx.db.query<{ type: string; data: Record<string, unknown> }>(
      `select type, data from audit_events where realm_id = $1 and correlation_id = $2 and subject_id = $3
         and data ? 'sessions_revoked'`,
      [k.realm.id, correlationId, actor.userId],
    );
    assert.equal(audits.rows.length, 1, JSON.stringify(audits.rows));
    assert.equal(audits.rows[0]?.data.support_grants_revoked, 1);
  });
}

test('the support user’s account must stay active: a suspension alone makes support tokens inactive', async (t) => {
  const k = await supportKit(t);
  const actor = await apiCaller(k.h, k.realm);
  const customer = await k.customer();
  const { token } = await supportToken(k, customer, {}, actor);
  assert.equal((await k.introspect(token)).body.active, true);
  // Straight in the database: the live check itself must see it, not only the revocation path.
  await k.h.ctx.db.query("update users set state = 'suspended' where realm_id = $1 and id = $2", [
    k.realm.id,
    actor.userId,
  ]);
  assert.deepEqual((await k.introspect(token)).body, { active: false });
  assert.equal((await k.check(token, 'tickets.read')).body.reason_code, 'SUBJECT_TOKEN_INACTIVE');
});

test('a support user who no longer holds support.impersonate cannot redeem a handoff code', async (t) => {
  const k = await supportKit(t);
  const actor = await apiCaller(k.h, k.realm);
  const customer = await k.customer();
  const g = await k.grant(grantBody(customer), actor);
  assert.equal(g.status, 201, JSON.stringify(g.body));
  await k.h.ctx.db.query('delete from role_assignments where realm_id = $1 and subject_id = $2', [
    k.realm.id,
    actor.userId,
  ]);
  const r = await k.handoff(g.body.handoff_code);
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error, 'invalid_grant');
  assert.deepEqual(await k.audits('support.grant.redeemed'), []);
});
