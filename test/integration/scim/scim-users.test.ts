// SCIM Users (RFC 7644; docs/scim.md): the requests Entra ID and Okta send, recorded from their
// public SCIM documentation, against a connector of the realm.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { audits, rows } from '../../harness/signin-kit.ts';
import { assertScimError, ENTERPRISE, entraUser, oktaUser, PATCH_OP, scimSetup, USER } from './scim-kit.ts';

describe('SCIM Users', () => {
  test('case=Entra ID: create, find by userName filter, PATCH Replace without path, disable, delete', async (t) => {
    const { scim, h, realm, connector } = await scimSetup(t);
    // Entra checks first whether the user exists.
    const none = await scim(
      'GET',
      `/Users?filter=${encodeURIComponent('userName eq "Test_User_1@testuser.com"')}`,
    );
    assert.equal(none.status, 200);
    assert.deepEqual([none.body.totalResults, none.body.Resources], [0, []]);

    const created = await scim('POST', '/Users', entraUser(1));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.headers.get('content-type') ?? '', /^application\/scim\+json/);
    const id = created.body.id as string;
    assert.equal(created.headers.get('location'), created.body.meta.location);
    assert.equal(created.headers.get('etag'), created.body.meta.version);
    assert.deepEqual(created.body.schemas, [USER, ENTERPRISE]);
    assert.equal(created.body[ENTERPRISE].employeeNumber, 'E1');
    assert.equal(created.body.active, true);
    assert.equal(created.body.password, undefined);

    const found = await scim(
      'GET',
      `/Users?filter=${encodeURIComponent('userName eq "test_user_1@TESTUSER.com"')}`,
    );
    assert.equal(found.body.totalResults, 1);
    assert.equal(found.body.Resources[0].id, id);

    // Entra's PATCH: capitalised op names, a value object without a path, booleans as strings.
    const patched = await scim('PATCH', `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Replace', path: 'displayName', value: 'Ryan Leenay' },
        { op: 'Replace', value: { 'name.givenName': 'Ryan', [`${ENTERPRISE}:department`]: 'Sales' } },
        { op: 'Add', path: 'emails[type eq "home"].value', value: 'ryan@home.example' },
        { op: 'Replace', path: `${ENTERPRISE}:manager`, value: 'usr_other' },
      ],
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.displayName, 'Ryan Leenay');
    assert.equal(patched.body.name.givenName, 'Ryan');
    assert.equal(patched.body[ENTERPRISE].department, 'Sales');
    assert.deepEqual(patched.body[ENTERPRISE].manager, { value: 'usr_other' });
    assert.ok(patched.body.emails.some((e: { value: string }) => e.value === 'ryan@home.example'));
    assert.notEqual(patched.body.meta.version, created.body.meta.version);

    const disabled = await scim('PATCH', `/Users/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
    });
    assert.equal(disabled.body.active, false);
    const [account] = await rows(h, 'select state from users where realm_id = $1 and id = $2', [
      realm.id,
      id,
    ]);
    assert.equal(account?.state, 'suspended');
    const [suspended] = await audits(h, realm, 'user.suspended');
    assert.deepEqual([suspended?.actor_type, suspended?.actor_id], ['scim_connector', connector.id]);

    assert.equal((await scim('DELETE', `/Users/${id}`)).status, 204);
    assertScimError(await scim('GET', `/Users/${id}`), 404);
    const [gone] = await rows(h, 'select state from users where realm_id = $1 and id = $2', [realm.id, id]);
    assert.equal(gone?.state, 'deleted');
    assert.deepEqual(await rows(h, 'select * from scim_users where realm_id = $1', [realm.id]), []);
  });

  test('case=Okta: create with password, deactivate with PUT active false, reactivate', async (t) => {
    const { scim } = await scimSetup(t);
    const created = await scim('POST', '/Users', oktaUser(7));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const put = await scim('PUT', `/Users/${id}`, { ...oktaUser(7), id, active: false });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.active, false);
    const back = await scim('PUT', `/Users/${id}`, { ...oktaUser(7), id, active: true, locale: 'fr-FR' });
    assert.deepEqual([back.body.active, back.body.locale], [true, 'fr-FR']);
    // Okta's duplicate check by userName is case-insensitive.
    assertScimError(
      await scim('POST', '/Users', { ...oktaUser(7), userName: 'OKTA.USER7@example.com' }),
      409,
      'uniqueness',
    );
  });

  test('case=ETags: If-Match with a stale version is 412; the current one passes', async (t) => {
    const { scim } = await scimSetup(t);
    const created = await scim('POST', '/Users', entraUser(2));
    const id = created.body.id;
    const v1 = created.headers.get('etag') as string;
    const ok = await scim('PUT', `/Users/${id}`, { ...entraUser(2), displayName: 'New' }, { 'if-match': v1 });
    assert.equal(ok.status, 200);
    assertScimError(
      await scim('PUT', `/Users/${id}`, { ...entraUser(2), displayName: 'Newer' }, { 'if-match': v1 }),
      412,
    );
    const got = await scim('GET', `/Users/${id}`);
    assert.equal(got.headers.get('etag'), ok.body.meta.version);
    assert.equal(got.body.displayName, 'New');
  });

  test('case=paging: startIndex and count, count above 200 is 200', async (t) => {
    const { scim } = await scimSetup(t);
    for (let i = 0; i < 5; i++) assert.equal((await scim('POST', '/Users', oktaUser(i))).status, 201);
    const page = await scim('GET', '/Users?startIndex=2&count=2');
    assert.deepEqual([page.body.totalResults, page.body.startIndex, page.body.itemsPerPage], [5, 2, 2]);
    const all = await scim('GET', '/Users?count=1000');
    assert.equal(all.body.itemsPerPage, 5);
    const filtered = await scim(
      'GET',
      `/Users?filter=${encodeURIComponent('name.familyName sw "User" and not (externalId eq "00u3")')}&count=10`,
    );
    assert.equal(filtered.body.totalResults, 4);
    const projected = await scim('GET', '/Users?attributes=userName&count=1');
    assert.deepEqual(Object.keys(projected.body.Resources[0]).sort(), ['id', 'meta', 'schemas', 'userName']);
  });
});
