// An outside SCIM client provisions a batch of users into a group and deprovisions them the way
// Entra ID does (disable, then delete): each step is one transaction with its audit record and
// outbox event (docs/scim.md). The test uses 200 users; docs/scim.md reports a 10,000 run.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { events, rows } from '../../harness/signin-kit.ts';
import { entraUser, GROUP, PATCH_OP, scimSetup } from './scim-kit.ts';

const COUNT = 200;

describe('SCIM batch provisioning', () => {
  test(`case=${COUNT} users provisioned into a group, then disabled and deleted`, async (t) => {
    const { scim, h, realm } = await scimSetup(t);
    const ids: string[] = [];
    for (let i = 0; i < COUNT; i++) {
      const r = await scim('POST', '/Users', entraUser(`b${i}`));
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids.push(r.body.id);
    }
    const g = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'All staff' });
    for (let i = 0; i < COUNT; i += 50) {
      const r = await scim('PATCH', `/Groups/${g.body.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Add', path: 'members', value: ids.slice(i, i + 50).map((value) => ({ value })) }],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const listed = await scim('GET', '/Users?count=200');
    assert.deepEqual([listed.body.totalResults, listed.body.itemsPerPage], [COUNT, COUNT]);
    assert.equal((await scim('GET', `/Groups/${g.body.id}`)).body.members.length, COUNT);
    const created = await events(h, realm, 'user.created');
    assert.equal(created.filter((e) => ids.includes(e.data.user_id)).length, COUNT);

    for (const id of ids) {
      const off = await scim('PATCH', `/Users/${id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Replace', path: 'active', value: false }],
      });
      assert.equal(off.body.active, false);
    }
    assert.equal((await events(h, realm, 'user.suspended')).length, COUNT);
    for (const id of ids) assert.equal((await scim('DELETE', `/Users/${id}`)).status, 204);
    assert.equal((await events(h, realm, 'user.deleted')).length, COUNT);
    assert.equal((await scim('GET', '/Users')).body.totalResults, 0);
    assert.equal((await scim('GET', `/Groups/${g.body.id}`)).body.members.length, 0);
    const [left] = await rows(
      h,
      "select count(*)::int as n from users where realm_id = $1 and created_via = 'scim' and state <> 'deleted'",
      [realm.id],
    );
    assert.equal(Number(left?.n), 0);
  });
});
