import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_ROLE_EXPANSION, type RoleHolding } from './effective-roles.ts';
import { type HeldAssignment, type HeldRoles, holdingsOf, type RoleDefinitions } from './role-definitions.ts';

type Def = [name: string, permissions: string[], composites: string[]];

const defsOf = (roles: Record<string, Def>, revision = 1): RoleDefinitions => ({
  revision,
  byId: new Map(
    Object.entries(roles).map(([id, [name, permissions, composites]]) => [
      id,
      { name, builtin: false, permissions, composites },
    ]),
  ),
});

const realm = (id: string): HeldAssignment => [id, 'realm', '', null];
const names = (hs: readonly RoleHolding[]) => hs.map((h) => `${h.name}@${h.scope_type}:${h.scope_id}`).sort();
const expand = (defs: RoleDefinitions, held: HeldAssignment[]) =>
  holdingsOf('rlm_test', defs, { revision: defs.revision, held, roles: null }) ?? [];

describe('role definitions › expanding held assignments', () => {
  test('case=composites count with the scope and conditions of the assignment they came through', () => {
    const defs = defsOf({
      a: ['admin', ['x.write'], ['w']],
      w: ['writer', ['x.edit'], ['r']],
      r: ['reader', ['x.read'], []],
    });
    const mfa = { require_mfa: true };
    const held = expand(defs, [realm('a'), ['r', 'organization', 'org_1', mfa]]);
    assert.deepEqual(names(held), [
      'admin@realm:',
      'reader@organization:org_1',
      'reader@realm:',
      'writer@realm:',
    ]);
    const inOrg = held.find((h) => h.scope_type === 'organization');
    assert.deepEqual(inOrg, {
      name: 'reader',
      builtin: false,
      permissions: ['x.read'],
      scope_type: 'organization',
      scope_id: 'org_1',
      conditions: mfa,
    });
  });

  test('case=one holding per role, scope and conditions; other conditions are another holding', () => {
    const defs = defsOf({ a: ['a', [], ['r']], b: ['b', [], ['r']], r: ['r', ['x.read'], []] });
    const held = expand(defs, [
      realm('a'),
      realm('b'),
      realm('r'),
      ['r', 'realm', '', { max_auth_age_seconds: 60 }],
    ]);
    assert.deepEqual(names(held), ['a@realm:', 'b@realm:', 'r@realm:', 'r@realm:']);
    assert.equal(held.filter((h) => h.name === 'r' && h.conditions === null).length, 1);
  });

  test('case=cycles end, and a composite id the realm no longer defines gives nothing', () => {
    const defs = defsOf({ a: ['a', [], ['b', 'gone']], b: ['b', [], ['a']] });
    assert.deepEqual(names(expand(defs, [realm('a')])), ['a@realm:', 'b@realm:']);
    assert.deepEqual(expand(defs, [realm('gone')]), []);
  });

  test('case=the expansion stops at the role expansion limit, the assigned role being the first', () => {
    const roles: Record<string, Def> = {};
    const chain = MAX_ROLE_EXPANSION + 5;
    for (let i = 0; i < chain; i++)
      roles[`r${i}`] = [`role-${i}`, [`p.${i}`], i + 1 < chain ? [`r${i + 1}`] : []];
    const held = expand(defsOf(roles), [realm('r0')]);
    assert.equal(held.length, MAX_ROLE_EXPANSION);
    assert.ok(held.some((h) => h.name === `role-${MAX_ROLE_EXPANSION - 1}`));
    assert.ok(!held.some((h) => h.name === `role-${MAX_ROLE_EXPANSION}`));
    // A shorter path reaches a role within the limit even when a longer one would not.
    roles.r0 = ['role-0', [], ['r1', `r${MAX_ROLE_EXPANSION + 2}`]];
    const short = expand(defsOf(roles), [realm('r0')]);
    assert.ok(short.some((h) => h.name === `role-${MAX_ROLE_EXPANSION + 2}`));
  });
});

describe('role definitions › the statement and the copy', () => {
  test('case=definitions the statement read are used and kept; none read means the copy given', () => {
    const realmId = `rlm_${Math.random().toString(36).slice(2)}`;
    const read: HeldRoles = {
      revision: '7',
      held: [realm('a')],
      roles: [['a', 'auditor', false, ['audit.read'], []]],
    };
    assert.deepEqual(names(holdingsOf(realmId, undefined, read) ?? []), ['auditor@realm:']);
    const copy = defsOf({ a: ['auditor', ['audit.read', 'audit.export'], []] }, 7);
    const again = holdingsOf(realmId, copy, { revision: 7, held: [realm('a')], roles: null }) ?? [];
    assert.deepEqual(again[0]?.permissions, ['audit.read', 'audit.export']);
    // No assignment: no holding; no roles computed: null.
    assert.deepEqual(holdingsOf(realmId, copy, { revision: 7, held: null, roles: null }), []);
    assert.equal(holdingsOf(realmId, copy, null), null);
    // A copy of another revision without definitions read is a fault, never a silent answer.
    assert.throws(() => holdingsOf(realmId, copy, { revision: 8, held: [realm('a')], roles: null }));
  });
});
