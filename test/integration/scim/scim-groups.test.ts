// SCIM Groups (RFC 7644; docs/scim.md) as Entra ID and Okta manage them: create, find by
// displayName, members added and removed by PATCH, renamed, deleted; each change audited by the
// groups context.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { audits } from '../../harness/signin-kit.ts';
import { assertScimError, entraUser, GROUP, PATCH_OP, scimSetup } from './scim-kit.ts';

describe('SCIM Groups', () => {
  test('case=Entra ID: create, filter by displayName, add and remove members, rename, delete', async (t) => {
    const { scim, h, realm } = await scimSetup(t);
    const a = (await scim('POST', '/Users', entraUser(1))).body.id;
    const b = (await scim('POST', '/Users', entraUser(2))).body.id;
    const created = await scim('POST', '/Groups', {
      schemas: [GROUP],
      externalId: 'g-1',
      displayName: 'Group1DisplayName',
      members: [],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    assert.deepEqual(
      [created.body.displayName, created.body.externalId, created.body.members],
      ['Group1DisplayName', 'g-1', []],
    );

    const found = await scim(
      'GET',
      `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "group1displayname"')}`,
    );
    assert.equal(found.body.totalResults, 1);
    assert.equal(found.body.Resources[0].members, undefined);

    const added = await scim('PATCH', `/Groups/${id}`, {
      schemas: [PATCH_OP],
      Operations: [{ op: 'Add', path: 'members', value: [{ value: a }, { value: b }] }],
    });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    assert.deepEqual(added.body.members.map((m: { value: string }) => m.value).sort(), [a, b].sort());
    assert.equal((await audits(h, realm, 'group.member.added')).length, 2);

    const removed = await scim('PATCH', `/Groups/${id}`, {
      schemas: [PATCH_OP],
      Operations: [
        { op: 'Remove', path: `members[value eq "${a}"]` },
        { op: 'Replace', value: { id, displayName: 'Renamed' } },
      ],
    });
    assert.deepEqual(
      removed.body.members.map((m: { value: string }) => m.value),
      [b],
    );
    assert.equal(removed.body.displayName, 'Renamed');
    assert.notEqual(removed.body.meta.version, added.body.meta.version);

    const stale = await scim(
      'PATCH',
      `/Groups/${id}`,
      {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Remove', path: 'members', value: [{ value: b }] }],
      },
      { 'if-match': added.body.meta.version },
    );
    assertScimError(stale, 412);

    // An unknown member is a bad value.
    assertScimError(
      await scim('PATCH', `/Groups/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'add', path: 'members', value: [{ value: 'usr_01JUNKNOWN0000000000000000' }] }],
      }),
      400,
      'invalidValue',
    );

    assert.equal((await scim('DELETE', `/Groups/${id}`)).status, 204);
    assertScimError(await scim('GET', `/Groups/${id}`), 404);
    assert.equal((await audits(h, realm, 'group.deleted')).length, 1);
  });

  test('case=Okta: PUT replaces the members; a duplicate name is uniqueness', async (t) => {
    const { scim } = await scimSetup(t);
    const a = (await scim('POST', '/Users', entraUser(3))).body.id;
    const g = await scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'Okta Group',
      members: [{ value: a, display: 'x' }],
    });
    assert.equal(g.body.members.length, 1);
    const put = await scim('PUT', `/Groups/${g.body.id}`, {
      schemas: [GROUP],
      id: g.body.id,
      displayName: 'Okta Group',
      members: [],
    });
    assert.deepEqual(put.body.members, []);
    assertScimError(
      await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Okta Group' }),
      409,
      'uniqueness',
    );
  });
});
