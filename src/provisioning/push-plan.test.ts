import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { desiredGroup, desiredUser, digestOf, type LocalUser, replaceAll, stepFor } from './push-plan.ts';

const user = (over: Partial<LocalUser> = {}): LocalUser => ({
  id: 'usr_1',
  state: 'active',
  display_name: 'Ada',
  email: 'ada@example.com',
  username: null,
  in_scope: true,
  ...over,
});

describe('provisioning › push plan', () => {
  test('case=the user a target holds follows the account', () => {
    assert.deepEqual(desiredUser(user()), {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      externalId: 'usr_1',
      userName: 'ada@example.com',
      displayName: 'Ada',
      active: true,
      emails: [{ value: 'ada@example.com', type: 'work', primary: true }],
    });
    assert.equal(desiredUser(user({ username: 'ada' }))?.userName, 'ada');
    assert.equal(desiredUser(user({ email: null }))?.userName, 'usr_1');
    assert.equal(desiredUser(user({ state: 'suspended' }))?.active, false);
    assert.equal(desiredUser(user({ state: 'locked' }))?.active, false);
    for (const state of ['deleted', 'pending_deletion']) assert.equal(desiredUser(user({ state })), null);
    assert.equal(desiredUser(user({ in_scope: false })), null);
  });

  test('case=one step: create, update only on a changed digest, delete only what the target holds', () => {
    const desired = desiredUser(user());
    assert.ok(desired);
    const digest = digestOf(desired);
    assert.equal(stepFor(desired, { remote_id: null, pushed_digest: null }).kind, 'create');
    assert.deepEqual(stepFor(desired, { remote_id: 'r1', pushed_digest: digest }), { kind: 'none' });
    assert.equal(stepFor(desired, { remote_id: 'r1', pushed_digest: 'other' }).kind, 'update');
    assert.deepEqual(stepFor(null, { remote_id: 'r1', pushed_digest: digest }), {
      kind: 'delete',
      remoteId: 'r1',
    });
    assert.deepEqual(stepFor(null, { remote_id: null, pushed_digest: null }), { kind: 'none' });
  });

  test('case=the digest ignores member order of objects but not of values', () => {
    assert.equal(digestOf({ a: 1, b: [1, 2] }), digestOf({ b: [1, 2], a: 1 }));
    assert.notEqual(digestOf({ a: 1, b: [1, 2] }), digestOf({ a: 1, b: [2, 1] }));
    const g = desiredGroup({ id: 'grp_1', name: 'eng', member_remote_ids: ['x', 'y'] });
    assert.deepEqual(g.members, [{ value: 'x' }, { value: 'y' }]);
  });

  test('case=an update is one PATCH replace without a path (RFC 7644 section 3.5.2.3)', () => {
    assert.deepEqual(replaceAll({ schemas: ['s'], displayName: 'x' }), {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { displayName: 'x' } }],
    });
  });
});
