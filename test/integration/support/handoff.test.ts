// The support handoff at the token endpoint (docs/support-access.md, "Handoff"): the support tool
// redeems a grant's one-time code by token exchange and gets one access token acting as the
// customer, with the support user as act.sub.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { TOKEN_EXCHANGE } from '../../../src/oauth/grants/token-exchange.grant.ts';
import { json } from '../../harness/signin-driver.ts';
import { oauthPost, seedServiceClient } from '../../harness/token-kit.ts';
import { grantBody, supportKit, TICKETS, TOOL } from './support-kit.ts';

test('the handoff code buys one access token: sub is the customer, act the support user, no refresh or ID token', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const orgId = await k.organizationFor(customer);
  const g = await k.grant(grantBody(customer, { organization_id: orgId, ttl_seconds: 120 }));
  assert.equal(g.status, 201, JSON.stringify(g.body));
  const r = await k.handoff(g.body.handoff_code);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.token_type, 'Bearer');
  assert.equal(r.body.scope, 'tickets:read');
  assert.equal(r.body.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token');
  assert.equal(r.body.refresh_token, undefined);
  assert.equal(r.body.id_token, undefined);
  const claims = decodeJwt(r.body.access_token);
  assert.equal(claims.sub, customer);
  assert.deepEqual(claims.act, { sub: k.admin.userId });
  assert.equal(claims.aud, TICKETS);
  assert.equal(claims.client_id, TOOL);
  assert.equal(claims.org_id, orgId);
  assert.equal(claims.support_grant_id, g.body.id);
  assert.equal(claims.scope, 'tickets:read');
  assert.equal(claims.auth_time, undefined);
  assert.equal(claims.sid, undefined);
  // The resource allows 600 s tokens; the grant ends after 120 s and the token with it.
  assert.ok((claims.exp as number) <= Math.floor(Date.parse(g.body.expires_at) / 1000));
  assert.ok(r.body.expires_in <= 120);
});

test('a handoff code is single use: the replay is invalid_grant and ends the grant', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const g = await k.grant(grantBody(customer));
  const first = await k.handoff(g.body.handoff_code);
  assert.equal(first.status, 200);
  const again = await k.handoff(g.body.handoff_code);
  assert.equal(again.status, 400);
  assert.equal(again.body.error, 'invalid_grant');
  const introspected = await k.introspect(first.body.access_token);
  assert.deepEqual(introspected.body, { active: false });
  const ended = await k.events('support.impersonation.ended');
  assert.deepEqual(
    ended.map((e) => e.data),
    [{ grant_id: g.body.id, reason: 'handoff_replayed' }],
  );
  const replays = await k.audits('support.handoff.replayed');
  assert.equal(replays[0]?.signal, 'impersonation_denied');
});

test('a handoff code expires after impersonation.handoff_ttl (30 s)', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const g = await k.grant(grantBody(customer));
  k.clock.advance(30_000);
  const r = await k.handoff(g.body.handoff_code);
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_grant');

  // Just inside the window it still works.
  const g2 = await k.grant(grantBody(customer));
  k.clock.advance(29_000);
  assert.equal((await k.handoff(g2.body.handoff_code)).status, 200);
});

test('only the grant’s support tool redeems it, for the grant’s resource and scopes; a miss spends nothing', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const g = await k.grant(grantBody(customer, { scopes: ['tickets:read', 'billing:read'] }));
  const other = await seedServiceClient(k.h, k.realm, 'other-tool', [TOKEN_EXCHANGE]);
  const wrongClient = await k.handoff(g.body.handoff_code, {}, other.creds);
  assert.equal(wrongClient.body.error, 'invalid_grant');
  const wrongResource = await k.handoff(g.body.handoff_code, { resource: 'https://other.example.test' });
  assert.equal(wrongResource.body.error, 'invalid_target');
  const wrongScope = await k.handoff(g.body.handoff_code, { scope: 'tickets:write' });
  assert.equal(wrongScope.body.error, 'invalid_scope');
  const narrowed = await k.handoff(g.body.handoff_code, { scope: 'billing:read' });
  assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
  assert.equal(narrowed.body.scope, 'billing:read');
  const garbage = await k.handoff('pa_sh_not-a-code');
  assert.equal(garbage.body.error, 'invalid_grant');
});

test('support tokens open neither the administration nor the account API, and are no subject token for an exchange', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  const g = await k.grant(grantBody(customer));
  const token = (await k.handoff(g.body.handoff_code)).body.access_token as string;
  for (const path of ['/users', '/me/sessions', '/me/support-grants']) {
    const r = await k.h.get(`/api/v1/realms/${k.realm.name}${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(r.status, 401, path);
  }
  const exchange = await oauthPost(
    k.h,
    k.realm,
    'token',
    {
      grant_type: TOKEN_EXCHANGE,
      subject_token: token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: TICKETS,
    },
    k.tool,
  );
  assert.equal(exchange.body.error, 'invalid_grant');
  const userinfo = await json(
    await k.h.get(`/realms/${k.realm.name}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  assert.equal(userinfo.status, 401);
});

test('a grant redeemed in its last second answers invalid_grant, not a server error, and spends nothing', async (t) => {
  const k = await supportKit(t);
  const customer = await k.customer();
  // Half past a second: the grant (and its code) end at x+1.5 s; at x+1.499 s less than one whole
  // second of token life is left.
  k.clock.advance(1500 - (k.clock.now().getTime() % 1000));
  const g = await k.grant(grantBody(customer, { ttl_seconds: 1 }));
  assert.equal(g.status, 201, JSON.stringify(g.body));
  k.clock.advance(999);
  const r = await k.handoff(g.body.handoff_code);
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.error, 'invalid_grant');
  const row = await k.h.ctx.db.query<{ handoff_used_at: Date | null }>(
    'select handoff_used_at from support_grants where realm_id = $1 and id = $2',
    [k.realm.id, g.body.id],
  );
  assert.equal(row.rows[0]?.handoff_used_at, null);
  assert.deepEqual(await k.audits('support.grant.redeemed'), []);
});
