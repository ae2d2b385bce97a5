// SCIM connectors of one organization (docs/scim.md, "Organization connectors"): its directory
// provisions accounts that join the organization, sees only the accounts it provisioned and the
// organization's groups, and deprovisioning ends the membership, erasing the account only when no
// other organization holds it. Managed by the organization's own administrators.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { orgAdmin } from '../roles/roles-kit.ts';
import { assertScimError, entraUser, GROUP, PATCH_OP, scimSetup } from './scim-kit.ts';

async function orgSetup(t: TestContext) {
  const s = await scimSetup(t);
  const orgA = await seedOrganization(s.h, s.realm, { slug: 'acme' });
  const orgB = await seedOrganization(s.h, s.realm, { slug: 'globex' });
  // Acme's own administrator, holding no realm role, sets up Acme's directory.
  const acmeAdmin = await orgAdmin(s.h, s.realm, orgA);
  const made = await acmeAdmin.as('POST', `/organizations/${orgA}/scim-connectors`, { name: 'Acme Entra' });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal(made.body.organization_id, orgA);
  const other = await s.api('POST', `/organizations/${orgB}/scim-connectors`, { name: 'Globex Okta' });
  assert.equal(other.status, 201);
  const acme = (method: string, path: string, body?: unknown) =>
    s.scim(method, path, body, {}, made.body.token as string);
  const globex = (method: string, path: string, body?: unknown) =>
    s.scim(method, path, body, {}, other.body.token as string);
  return { ...s, orgA, orgB, acmeAdmin, acme, globex, acmeConnector: made.body };
}

const stateOf = async (s: Awaited<ReturnType<typeof orgSetup>>, userId: string) =>
  (
    await s.h.ctx.db.query<{ state: string }>('select state from users where realm_id = $1 and id = $2', [
      s.realm.id,
      userId,
    ])
  ).rows[0]?.state;

test('case=an organization connector provisions members of its organization and sees only its own accounts', async (t) => {
  const s = await orgSetup(t);
  const created = await s.acme('POST', '/Users', entraUser(1));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const members = await s.api('GET', `/organizations/${s.orgA}/members`);
  assert.deepEqual(
    members.body.items
      .filter((m: { user_id: string }) => m.user_id !== s.acmeAdmin.caller.userId)
      .map((m: { user_id: string; source: string; state: string }) => [m.user_id, m.source, m.state]),
    [[id, 'scim', 'active']],
  );
  // Acme sees its account; Globex's directory does not, by any route.
  assert.equal((await s.acme('GET', `/Users/${id}`)).status, 200);
  assert.equal((await s.acme('GET', '/Users')).body.totalResults, 1);
  assertScimError(await s.globex('GET', `/Users/${id}`), 404);
  assert.equal((await s.globex('GET', '/Users')).body.totalResults, 0);
  const byName = await s.globex(
    'GET',
    `/Users?filter=${encodeURIComponent(`userName eq "${entraUser(1).userName}"`)}`,
  );
  assert.equal(byName.body.totalResults, 0);
  assertScimError(
    await s.globex('PATCH', `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: false }],
    }),
    404,
  );
  assertScimError(await s.globex('DELETE', `/Users/${id}`), 404);
  // userName stays unique in the whole realm.
  assertScimError(await s.globex('POST', '/Users', entraUser(1)), 409, 'uniqueness');
  // The realm's own connector sees every provisioned account.
  assert.equal((await s.scim('GET', `/Users/${id}`)).status, 200);

  // Connectors are listed where they belong.
  const realmList = await s.api('GET', '/scim-connectors');
  assert.deepEqual(
    realmList.body.items.map((c: { organization_id: string | null }) => c.organization_id),
    [null],
  );
  const acmeList = await s.acmeAdmin.as('GET', `/organizations/${s.orgA}/scim-connectors`);
  assert.deepEqual(
    acmeList.body.items.map((c: { id: string }) => c.id),
    [s.acmeConnector.id],
  );
  // Acme's administrator can neither see nor make the realm's connectors, nor Globex's.
  assert.equal((await s.acmeAdmin.as('GET', '/scim-connectors')).status, 403);
  assert.equal((await s.acmeAdmin.as('GET', `/organizations/${s.orgB}/scim-connectors`)).status, 404);
});

test("case=an organization connector's groups are the organization's groups", async (t) => {
  const s = await orgSetup(t);
  const user = await s.acme('POST', '/Users', entraUser(2));
  const g = await s.acme('POST', '/Groups', { schemas: [GROUP], displayName: 'Engineering' });
  assert.equal(g.status, 201, JSON.stringify(g.body));
  const added = await s.acme('PATCH', `/Groups/${g.body.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Add', path: 'members', value: [{ value: user.body.id }] }],
  });
  assert.equal(added.status, 200, JSON.stringify(added.body));
  assert.deepEqual(
    added.body.members.map((m: { value: string }) => m.value),
    [user.body.id],
  );
  const orgGroups = await s.api('GET', `/organizations/${s.orgA}/groups`);
  assert.deepEqual(
    orgGroups.body.items.map((x: { name: string }) => x.name),
    ['Engineering'],
  );
  // Not a realm group, and not Globex's.
  assertScimError(await s.scim('GET', `/Groups/${g.body.id}`), 404);
  assertScimError(await s.globex('GET', `/Groups/${g.body.id}`), 404);
  assert.equal((await s.globex('GET', '/Groups')).body.totalResults, 0);
  // A realm account that is no member of Acme cannot join Acme's group.
  const outsider = await s.scim('POST', '/Users', entraUser(3));
  assertScimError(
    await s.acme('PATCH', `/Groups/${g.body.id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: [{ value: outsider.body.id }] }],
    }),
    400,
    'invalidValue',
  );
});

test('case=deprovisioning ends the membership; the account is erased only when no other organization holds it', async (t) => {
  const s = await orgSetup(t);
  const solo = (await s.acme('POST', '/Users', entraUser(4))).body.id as string;
  const shared = (await s.acme('POST', '/Users', entraUser(5))).body.id as string;
  await seedMembership(s.h, s.realm, s.orgB, shared);

  assert.equal((await s.acme('DELETE', `/Users/${solo}`)).status, 204);
  assert.equal(await stateOf(s, solo), 'deleted');

  assert.equal((await s.acme('DELETE', `/Users/${shared}`)).status, 204);
  assert.equal(await stateOf(s, shared), 'active', 'Globex still holds the account');
  const acmeMembers = await s.api('GET', `/organizations/${s.orgA}/members`);
  assert.deepEqual(
    acmeMembers.body.items
      .filter((m: { user_id: string }) => m.user_id !== s.acmeAdmin.caller.userId)
      .map((m: { user_id: string; state: string }) => [m.user_id, m.state])
      .sort(),
    [
      [shared, 'removed'],
      [solo, 'removed'],
    ].sort(),
  );
  const globexMembers = await s.api('GET', `/organizations/${s.orgB}/members`);
  assert.deepEqual(
    globexMembers.body.items.map((m: { user_id: string }) => m.user_id),
    [shared],
  );
  assertScimError(await s.acme('GET', `/Users/${shared}`), 404);
  const removed = await s.h.ctx.db.query<{ event_type: string }>(
    `select event_type from outbox where realm_id = $1 and event_type = 'organization.membership.removed'`,
    [s.realm.id],
  );
  assert.equal(removed.rows.length, 2);
});

test('case=the directory of a suspended organization is refused; a revoked connector too', async (t) => {
  const s = await orgSetup(t);
  assert.equal((await s.acme('GET', '/Users')).status, 200);
  await s.h.ctx.db.query(`update organizations set state = 'suspended' where realm_id = $1 and id = $2`, [
    s.realm.id,
    s.orgA,
  ]);
  assertScimError(await s.acme('GET', '/Users'), 401);
  const revoked = await s.api(
    'DELETE',
    `/organizations/${s.orgB}/scim-connectors/${(await s.api('GET', `/organizations/${s.orgB}/scim-connectors`)).body.items[0].id}`,
  );
  assert.equal(revoked.status, 204);
  assertScimError(await s.globex('GET', '/Users'), 401);
  // A connector id of another organization is not found on this one's routes.
  const wrong = await s.api('DELETE', `/organizations/${s.orgB}/scim-connectors/${s.acmeConnector.id}`);
  assert.equal(wrong.status, 404);
});
