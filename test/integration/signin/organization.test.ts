// Organization selection in sign-in (spec doc 1, evaluation order steps 2, 7 and 8, the MFA
// conditions, POST .../{id}/organization; doc 2, Organization membership): only active
// memberships in active organizations are offered, the start parameter preselects, and the
// organization's policy (mfa_required, require_sso) applies once the organization is known.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import type { Harness } from '../../harness/harness.ts';
import { type OrgSeed, seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  assertNothingIssued,
  events,
  movableClock,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  rows,
  signinSetup,
  startBrowser,
  totpCode,
  txRow,
} from '../../harness/signin-kit.ts';
import { seedGrant, seedResource } from '../../harness/token-kit.ts';

const ORDERS = 'https://orders.example.com';
const PLAIN = 'https://plain.example.com';
const LOGIN_UI = 'https://login.example.com/signin';
const ORDERS_START = { scope: 'openid orders:read', resource: [ORDERS] };

async function setup(t: TestContext) {
  const clock = movableClock();
  const s = await signinSetup(t, {
    clock,
    loginUi: LOGIN_UI,
    client: { allowedOrigins: ['https://login.example.com'] },
  });
  const orders = await seedResource(s.h, s.realm, {
    audience: ORDERS,
    scopes: ['orders:read'],
    requiresOrganization: true,
  });
  await seedGrant(s.h, s.realm, s.client, orders, { scopes: ['orders:read'] });
  const plain = await seedResource(s.h, s.realm, { audience: PLAIN, scopes: ['plain:read'] });
  await seedGrant(s.h, s.realm, s.client, plain, { scopes: ['plain:read'] });
  /** An organization (slug = display name) with alice's membership in the given state, if any. */
  const org = async (
    slug: string,
    membership: Parameters<typeof seedMembership>[4] | null,
    o: OrgSeed = {},
  ) => {
    const id = await seedOrganization(s.h, s.realm, { slug, ...o });
    if (membership) await seedMembership(s.h, s.realm, id, s.user.id, membership);
    return id;
  };
  const signIn = (extra: Record<string, unknown> = ORDERS_START) =>
    passwordSignIn(s.h, s.realm.name, 'web-app', 'alice@example.com', PASSWORD, extra);
  return { ...s, clock, org, signIn };
}

const codeOrg = async (h: Harness, realm: RealmRow, txId: string) =>
  (
    await rows(h, 'select org_id from authorization_codes where realm_id = $1 and transaction_id = $2', [
      realm.id,
      txId,
    ])
  )[0]?.org_id;

function assertBlocked(state: { status: string; next_actions: unknown[]; error?: string }, error: string) {
  assert.equal(state.status, 'pending', JSON.stringify(state));
  assert.deepEqual(state.next_actions, []);
  assert.equal(state.error, error);
}

describe('sign-in › organization selection', () => {
  test('case=no active membership answers no_organization/mode=headless', async (t) => {
    const s = await setup(t);
    const none = await s.signIn();
    assertBlocked(none.state.body, 'no_organization');
    // Invited, awaiting approval, suspended, or active in a suspended organization: still none.
    await s.org('invited', 'invited');
    await s.org('asked', 'pending_approval');
    await s.org('paused', 'suspended');
    await s.org('closed', 'active', { state: 'suspended' });
    await s.org('gone', 'removed');
    // Active on paper but past its expires_at (the sweep has not run yet).
    const lapsed = await s.org('lapsed', 'active');
    await s.h.ctx.db.query(
      'update memberships set expires_at = $3 where realm_id = $1 and organization_id = $2',
      [s.realm.id, lapsed, new Date(s.clock.now().getTime() - 1000)],
    );
    const still = await s.signIn();
    assertBlocked(still.state.body, 'no_organization');
    assertBlocked((await still.tx.get()).body, 'no_organization');
    await assertNothingIssued(s.h, s.realm);
  });

  test('case=two memberships offer exactly the active ones; the choice reaches code, grant and event/mode=headless', async (t) => {
    const s = await setup(t);
    const beta = await s.org('beta', 'active');
    const alpha = await s.org('alpha', 'active');
    await s.org('paused', 'suspended');
    await s.org('closed', 'active', { state: 'suspended' });
    const { tx, state } = await s.signIn();
    assert.equal(state.body.status, 'pending');
    assert.deepEqual(state.body.next_actions, [
      {
        type: 'select_organization',
        required: true,
        fields: ['organization_id'],
        options: {
          organizations: [
            { id: alpha, slug: 'alpha', display_name: 'alpha' },
            { id: beta, slug: 'beta', display_name: 'beta' },
          ],
        },
      },
    ]);
    assert.equal(state.body.error, undefined);
    const done = await tx.step('organization', { organization_id: beta });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal(await codeOrg(s.h, s.realm, tx.id), beta);
    assert.equal((await txRow(s.h, s.realm, tx.id)).organization_id, beta);
    const [grant] = await rows(s.h, 'select org_id from oauth_grants where realm_id = $1', [s.realm.id]);
    assert.equal(grant?.org_id, beta);
    const [signedIn] = await events(s.h, s.realm, 'user.signed_in');
    assert.equal(signedIn?.org_id, beta);
  });

  test('case=a single active membership is selected without asking/mode=headless', async (t) => {
    const s = await setup(t);
    const only = await s.org('only', 'active');
    await s.org('paused', 'suspended');
    const { tx, state } = await s.signIn();
    assert.equal(state.body.status, 'completed', JSON.stringify(state.body));
    assert.equal(await codeOrg(s.h, s.realm, tx.id), only);
    assert.equal((await txRow(s.h, s.realm, tx.id)).organization_id, only);
  });

  test('case=choosing an organization that was not offered answers organization_access_denied/mode=headless', async (t) => {
    const s = await setup(t);
    await s.org('alpha', 'active');
    await s.org('beta', 'active');
    const paused = await s.org('paused', 'suspended');
    const foreign = await s.org('foreign', null);
    for (const choice of [paused, foreign, 'org_unknown']) {
      const { tx, state } = await s.signIn();
      assert.deepEqual(actionTypes(state.body), ['select_organization']);
      const denied = await tx.step('organization', { organization_id: choice });
      assert.equal(denied.status, 200);
      assertBlocked(denied.body, 'organization_access_denied');
      // The transaction stays blocked: no other choice is offered afterwards.
      const again = await tx.step('organization', { organization_id: choice });
      assert.equal(again.status, 409);
    }
    await assertNothingIssued(s.h, s.realm);
  });

  test('case=the organization step takes strict JSON and only when offered/mode=headless', async (t) => {
    const s = await setup(t);
    await s.org('alpha', 'active');
    await s.org('beta', 'active');
    const { tx } = await s.signIn();
    const unknown = await tx.step('organization', { organization_id: 'x', org_admin: true });
    assert.equal(unknown.status, 400);
    assert.equal((await tx.step('organization', {})).status, 422, 'a missing member is a value error');
    const plain = await s.signIn({ scope: 'openid plain:read', resource: [PLAIN] });
    assert.equal(plain.state.body.status, 'completed', 'no organization needed, none asked');
    const early = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, ORDERS_START);
    assert.equal((await early.step('organization', { organization_id: 'x' })).status, 409);
  });

  test('case=the start parameter preselects an organization the user is an active member of/mode=headless', async (t) => {
    const s = await setup(t);
    const alpha = await s.org('alpha', 'active');
    const beta = await s.org('beta', 'active');
    const bySlug = await s.signIn({ ...ORDERS_START, organization: 'BETA' });
    assert.equal(bySlug.state.body.status, 'completed', JSON.stringify(bySlug.state.body));
    assert.equal(await codeOrg(s.h, s.realm, bySlug.tx.id), beta);
    const byId = await s.signIn({ ...ORDERS_START, organization: alpha });
    assert.equal(byId.state.body.status, 'completed');
    assert.equal(await codeOrg(s.h, s.realm, byId.tx.id), alpha);
    assert.equal((await txRow(s.h, s.realm, byId.tx.id)).organization, alpha);
  });

  test('case=the start parameter naming an organization the user cannot enter answers organization_access_denied/mode=headless', async (t) => {
    const s = await setup(t);
    await s.org('alpha', 'active');
    const foreign = await s.org('foreign', null);
    await s.org('paused', 'suspended');
    await s.org('closed', 'active', { state: 'suspended' });
    for (const organization of [foreign, 'paused', 'closed', 'nowhere']) {
      const { state } = await s.signIn({ ...ORDERS_START, organization });
      assertBlocked(state.body, 'organization_access_denied');
    }
    await assertNothingIssued(s.h, s.realm);
  });

  test('case=the authorization endpoint organization parameter preselects/mode=browser', async (t) => {
    const s = await setup(t);
    await s.org('alpha', 'active');
    const beta = await s.org('beta', 'active');
    const tx = await startBrowser(s.h, s.realm.name, 'web-app', REDIRECT, {
      extra: { scope: 'openid orders:read', resource: ORDERS, organization: 'beta' },
      origin: 'https://login.example.com',
    });
    await tx.step('identify', { identifier: 'alice@example.com' });
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal(await codeOrg(s.h, s.realm, tx.id), beta);
  });

  test('case=an organization without a resource that needs one still binds the sign-in/mode=headless', async (t) => {
    const s = await setup(t);
    const alpha = await s.org('alpha', 'active');
    await s.org('beta', 'active');
    const plain = { scope: 'openid plain:read', resource: [PLAIN] };
    const unbound = await s.signIn(plain);
    assert.equal(unbound.state.body.status, 'completed');
    assert.equal(await codeOrg(s.h, s.realm, unbound.tx.id), null);
    const bound = await s.signIn({ ...plain, organization: 'alpha' });
    assert.equal(bound.state.body.status, 'completed');
    assert.equal(await codeOrg(s.h, s.realm, bound.tx.id), alpha);
    const denied = await s.signIn({ ...plain, organization: 'nowhere' });
    assertBlocked(denied.state.body, 'organization_access_denied');
  });
});

describe('sign-in › organization policy', () => {
  test('case=mfa_required asks for MFA once the organization is selected/mode=headless', async (t) => {
    const s = await setup(t);
    const strict = await s.org('strict', 'active', { policy: { mfa_required: true } });
    await s.org('relaxed', 'active');
    const relaxed = await s.signIn();
    const plainDone = await relaxed.tx.step('organization', { organization_id: 'relaxed' });
    assert.equal(plainDone.body.status, 'completed', 'the other organization needs no MFA');

    const { tx, state } = await s.signIn();
    assert.deepEqual(actionTypes(state.body), ['select_organization'], 'unknown organization: no MFA yet');
    const selected = await tx.step('organization', { organization_id: strict });
    assert.equal(selected.body.status, 'pending');
    assert.deepEqual(actionTypes(selected.body), ['enroll_totp', 'enroll_webauthn']);
    const enrolled = await tx.step('totp/enroll', {});
    const secret: string = enrolled.body.one_time.totp.secret;
    const done = await tx.step('totp/activate', { code: totpCode(secret, s.clock.now()) });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.ok(done.body.completed_factors.includes('totp'));
    assert.equal(await codeOrg(s.h, s.realm, tx.id), strict);
    const [session] = await rows(
      s.h,
      `select s.mfa from authorization_codes c join sessions s on s.realm_id = c.realm_id and s.id = c.session_id
        where c.realm_id = $1 and c.transaction_id = $2`,
      [s.realm.id, tx.id],
    );
    assert.equal(session?.mfa, true);
  });

  test('case=mfa_required of a preselected organization applies right after the password/mode=headless', async (t) => {
    const s = await setup(t);
    await s.org('strict', 'active', { policy: { mfa_required: true } });
    const { state } = await s.signIn({ ...ORDERS_START, organization: 'strict' });
    assert.deepEqual(actionTypes(state.body), ['enroll_totp', 'enroll_webauthn']);
    // A non-member is refused without being asked to enroll for an organization they cannot enter.
    await s.org('elsewhere', null, { policy: { mfa_required: true } });
    const outsider = await s.signIn({ ...ORDERS_START, organization: 'elsewhere' });
    assertBlocked(outsider.state.body, 'organization_access_denied');
  });

  test('case=require_sso without a provider for the client blocks a local sign-in with connection_not_allowed/mode=headless', async (t) => {
    const s = await setup(t);
    await s.org('sso', 'active', { policy: { require_sso: true } });
    // Preselected: only its providers are offered, before any local factor; it has none.
    const preselected = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, {
      ...ORDERS_START,
      organization: 'sso',
    });
    assertBlocked(preselected.start.body.state, 'connection_not_allowed');
    assert.equal((await preselected.step('identify', { identifier: 'alice@example.com' })).status, 409);
    // Selected (here the only membership): the enterprise SSO step (8) stops the local sign-in.
    const selected = await s.signIn();
    assertBlocked(selected.state.body, 'connection_not_allowed');
    await s.org('local', 'active');
    const chosen = await s.signIn();
    const blocked = await chosen.tx.step('organization', { organization_id: 'sso' });
    assertBlocked(blocked.body, 'connection_not_allowed');
    await assertNothingIssued(s.h, s.realm);
  });
});
