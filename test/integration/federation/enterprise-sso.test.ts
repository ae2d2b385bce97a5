// Enterprise SSO by organization (spec doc 1, evaluation steps 2 and 8; docs/federation.md,
// Enterprise SSO): an organization that requires SSO offers only its own providers, found from the
// start's organization or by home-realm discovery of the identifier's verified domain; just-in-time
// accounts join the organization; connection_not_allowed where no connection may serve; the
// emergency control takes a connection out of every sign-in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  connectStandin,
  createConnection,
  type FederationSetup,
  federationSetup,
  headless,
  openCallback,
  startFederation,
} from '../../harness/federation-kit.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { actionTypes, PASSWORD, rows } from '../../harness/signin-kit.ts';
import { seedGrant, seedResource } from '../../harness/token-kit.ts';
import { type Standin, startStandin } from '../../harness/upstream-standin.ts';

async function acme(
  t: Parameters<typeof federationSetup>[0],
  o: { requireSso?: boolean; clients?: string[] } = {},
) {
  const s = await federationSetup(t);
  const up = await startStandin(t);
  const org = await seedOrganization(s.h, s.realm, {
    slug: 'acme',
    policy: { require_sso: o.requireSso ?? true },
  });
  await s.h.ctx.db.query(
    `insert into organization_domains (realm_id, domain, organization_id, verified, created_at)
     values ($1, 'acme.example', $2, true, now()), ($1, 'unverified.example', $2, false, now())`,
    [s.realm.id, org],
  );
  const member = await s.h.ctx.db.query<{ id: string }>(
    `select id from roles where realm_id = $1 and name = 'member' and builtin`,
    [s.realm.id],
  );
  const c = await connectStandin(
    s,
    up,
    'acme-idp',
    {
      display_name: 'Acme',
      config: { client_id: up.clientId, ...(o.clients ? { client_ids: o.clients } : {}) },
      jit_default_role_id: member.rows[0]?.id,
    },
    `/organizations/${org}/identity-providers`,
  );
  up.account = { sub: 'acme-7', email: 'carol@acme.example', email_verified: true, name: 'Carol' };
  return { s, up, org, c };
}

const providersOf = (state: {
  next_actions: { type: string; options?: { providers?: { alias: string }[] } }[];
}) =>
  (state.next_actions.find((a) => a.type === 'external_redirect')?.options?.providers ?? []).map(
    (p) => p.alias,
  );

async function finish(
  s: FederationSetup,
  up: Standin,
  tx: Awaited<ReturnType<typeof headless>>,
  alias: string,
) {
  const started = await startFederation(tx, alias);
  await openCallback(await up.authorize(started.body.external_redirect));
  return (await tx.get()).body;
}

describe('federation › enterprise SSO', () => {
  test('case=an organization that requires SSO named at the start offers only its provider; the new account joins it/mode=headless', async (t) => {
    const { s, up, org } = await acme(t);
    await createConnection(s, {
      alias: 'realm-wide',
      display_name: 'Realm',
      issuer: 'https://idp.example.com',
      config: { client_id: 'x' },
      client_secret: 'y',
    });
    const tx = await headless(s, { organization: 'acme' });
    assert.deepEqual(actionTypes(tx.start.body.state), ['external_redirect']);
    assert.deepEqual(providersOf(tx.start.body.state), ['acme-idp']);
    const refused = await tx.step('federation/start', { provider: 'realm-wide' });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.code, 'connection_not_allowed');
    assert.equal(
      (await tx.step('password', { identifier: 'x@acme.example', password: PASSWORD })).status,
      409,
    );

    const state = await finish(s, up, tx, 'acme-idp');
    assert.equal(state.status, 'completed', JSON.stringify(state));
    const [user] = await rows(s.h, `select * from users where realm_id = $1 and created_via = 'federation'`, [
      s.realm.id,
    ]);
    const [membership] = await rows(s.h, 'select * from memberships where realm_id = $1 and user_id = $2', [
      s.realm.id,
      user?.id,
    ]);
    assert.deepEqual(
      [membership?.organization_id, membership?.state, membership?.source],
      [org, 'active', 'federation'],
    );
    const roles = await rows(
      s.h,
      `select r.name from role_assignments a join roles r on r.realm_id = a.realm_id and r.id = a.role_id
        where a.realm_id = $1 and a.subject_id = $2 and a.scope_id = $3`,
      [s.realm.id, user?.id, org],
    );
    assert.deepEqual(
      roles.map((r) => r.name),
      ['member'],
    );
    const [code] = await rows(
      s.h,
      `select org_id from authorization_codes where realm_id = $1 and transaction_id = $2`,
      [s.realm.id, tx.id],
    );
    assert.equal(code?.org_id, org, 'the sign-in is into the organization');
  });

  test('case=home-realm discovery at identify: a verified domain leads to its organization provider/mode=headless', async (t) => {
    const { s, up } = await acme(t);
    const tx = await headless(s);
    assert.ok(actionTypes(tx.start.body.state).includes('password'), 'before identify: local methods');
    assert.deepEqual(
      providersOf(tx.start.body.state),
      [],
      'organization providers are not offered to everyone',
    );
    const identified = await tx.step('identify', { identifier: 'carol@acme.example' });
    assert.deepEqual(actionTypes(identified.body), ['external_redirect'], 'only the SSO provider');
    assert.deepEqual(providersOf(identified.body), ['acme-idp']);
    const hinted = await startFederation(tx, 'acme-idp');
    assert.equal(new URL(hinted.body.external_redirect).searchParams.get('login_hint'), 'carol@acme.example');
    await up.authorize(hinted.body.external_redirect);
    const unverified = await headless(s);
    const other = await unverified.step('identify', { identifier: 'dan@unverified.example' });
    assert.ok(actionTypes(other.body).includes('password'), 'an unverified domain discovers nothing');
    assert.deepEqual(providersOf(other.body), []);
    const state = await finish(s, up, tx, 'acme-idp');
    assert.equal(state.status, 'completed');
  });

  test('case=a discovered organization without require_sso puts its provider first beside local methods/mode=headless', async (t) => {
    const { s } = await acme(t, { requireSso: false });
    const tx = await headless(s);
    const identified = await tx.step('identify', { identifier: 'carol@acme.example' });
    assert.ok(actionTypes(identified.body).includes('password'));
    assert.deepEqual(providersOf(identified.body), ['acme-idp']);
  });

  test('case=no connection allowed for the client blocks with connection_not_allowed/mode=headless', async (t) => {
    const { s } = await acme(t, { clients: ['another-client'] });
    const tx = await headless(s, { organization: 'acme' });
    assert.deepEqual(tx.start.body.state.next_actions, []);
    assert.equal(tx.start.body.state.error, 'connection_not_allowed');
  });

  test('case=step 8: after a local sign-in the organization in effect wants its provider, which then links/mode=headless', async (t) => {
    const { s, up, org } = await acme(t);
    const erin = await s.h.createUser(s.realm, { email: 'erin@example.com', password: PASSWORD });
    await seedMembership(s.h, s.realm, org, erin.id);
    const orders = await seedResource(s.h, s.realm, {
      audience: 'https://orders.example.com',
      scopes: ['orders:read'],
      requiresOrganization: true,
    });
    await seedGrant(s.h, s.realm, s.client, orders, { scopes: ['orders:read'] });
    const tx = await headless(s, { resource: ['https://orders.example.com'] });
    await tx.step('identify', { identifier: 'erin@example.com' });
    const local = await tx.step('password', { password: PASSWORD });
    assert.equal(local.body.status, 'pending');
    assert.deepEqual(local.body.completed_factors, ['pwd']);
    assert.deepEqual(actionTypes(local.body), ['external_redirect'], 'step 8: the organization requires SSO');
    assert.deepEqual(providersOf(local.body), ['acme-idp']);

    up.account = { sub: 'erin-acme', email: 'erin@acme.example', email_verified: true };
    const done = await finish(s, up, tx, 'acme-idp');
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.completed_factors, ['pwd', 'fed']);
    const [link] = await rows(s.h, 'select * from linked_identities where realm_id = $1', [s.realm.id]);
    assert.deepEqual(
      [link?.user_id, link?.provenance],
      [erin.id, 'link'],
      'linked to the account that proved itself',
    );
    const [code] = await rows(
      s.h,
      `select org_id from authorization_codes where realm_id = $1 and transaction_id = $2`,
      [s.realm.id, tx.id],
    );
    assert.equal(code?.org_id, org);

    // An upstream identity linked to another account never finishes Erin's sign-in.
    const second = await headless(s, { resource: ['https://orders.example.com'] });
    const frank = await s.h.createUser(s.realm, { email: 'frank@example.com', password: PASSWORD });
    await seedMembership(s.h, s.realm, org, frank.id);
    await second.step('identify', { identifier: 'frank@example.com' });
    await second.step('password', { password: PASSWORD });
    const refused = await finish(s, up, second, 'acme-idp');
    assert.equal(refused.status, 'pending');
    assert.deepEqual(refused.completed_factors, ['pwd']);
    const row = await rows(s.h, 'select failures from signin_transactions where realm_id = $1 and id = $2', [
      s.realm.id,
      second.id,
    ]);
    assert.equal(row[0]?.failures, 1, 'a failed proof');
    assert.equal(
      (await rows(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id])).length,
      1,
    );
  });

  test('case=the emergency control takes a connection out of every sign-in, and its callbacks give the notice/mode=headless', async (t) => {
    const { s, up, c } = await acme(t, { requireSso: false });
    const tx = await headless(s);
    await tx.step('identify', { identifier: 'carol@acme.example' });
    const started = await startFederation(tx, 'acme-idp');
    const callback = await up.authorize(started.body.external_redirect);
    const off = await s.admin.call('POST', '/emergency/controls', {
      target_type: 'identity_provider',
      target_id: c.id,
      action: 'disable',
      reason: 'upstream compromised',
    });
    assert.equal(off.status, 200);
    assert.equal((await openCallback(callback)).status, 200);
    const state = (await tx.get()).body;
    assert.equal(state.status, 'pending');
    assert.equal(state.notice, 'upstream_unavailable');
    assert.deepEqual(providersOf(state), [], 'no longer offered');
    assert.equal(up.hits.token, 0, 'the disabled connection redeemed nothing');
    assert.equal(
      (await rows(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id])).length,
      0,
    );
    const again = await tx.step('federation/start', { provider: 'acme-idp' });
    assert.equal(again.status, 409, 'not offered');
  });
});
