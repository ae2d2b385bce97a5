import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expand, type GraphRole, incompatiblePair, roleGraphProblems } from './role-graph.ts';

const role = (id: string, over: Partial<GraphRole> = {}): GraphRole => ({
  id,
  name: id,
  builtin: false,
  scope: 'realm',
  organizationId: null,
  projectId: null,
  permissions: [],
  composites: [],
  incompatible: [],
  ...over,
});

const graphOf = (...roles: GraphRole[]) => new Map(roles.map((r) => [r.id, r]));
const codes = (g: Map<string, GraphRole>, id: string) =>
  roleGraphProblems(g, g.get(id) as GraphRole).map((e) => e.code);

test('a role that contains itself, directly or through others, is a cycle', () => {
  assert.deepEqual(codes(graphOf(role('a', { composites: ['a'] })), 'a'), ['composite_cycle']);
  const g = graphOf(
    role('a', { composites: ['b'] }),
    role('b', { composites: ['c'] }),
    role('c', { composites: ['a'] }),
  );
  assert.deepEqual(codes(g, 'c'), ['composite_cycle']);
  assert.deepEqual(codes(graphOf(role('a', { composites: ['b'] }), role('b')), 'a'), []);
});

test('composites and exclusions stay in one scope and boundary', () => {
  const g = graphOf(
    role('o1', { scope: 'organization', organizationId: 'org_1', composites: ['wide', 'o2', 'r'] }),
    role('wide', { scope: 'organization' }),
    role('o2', { scope: 'organization', organizationId: 'org_2' }),
    role('r'),
  );
  assert.deepEqual(codes(g, 'o1'), ['scope_mismatch', 'scope_mismatch']);
  const p = graphOf(
    role('p1', { scope: 'project', projectId: 'prj_1', incompatible: ['p2', 'x'] }),
    role('p2', { scope: 'project', projectId: 'prj_2' }),
  );
  assert.deepEqual(codes(p, 'p1'), ['scope_mismatch', 'unknown_role']);
});

test('expansion counts the role itself: 64 roles pass, 65 do not, also for roles containing it', () => {
  const leaves = Array.from({ length: 64 }, (_, i) => role(`l${i}`));
  const ok = graphOf(...leaves, role('top', { composites: leaves.slice(0, 63).map((l) => l.id) }));
  assert.equal(expand(ok, ['top']).size, 64);
  assert.deepEqual(codes(ok, 'top'), []);
  const over = graphOf(...leaves, role('top', { composites: leaves.map((l) => l.id) }));
  assert.deepEqual(codes(over, 'top'), ['role_expansion_limit']);
  // Growing a leaf pushes the role above it past the limit.
  const grown = graphOf(
    ...leaves.slice(0, 63),
    role('l0', { composites: ['extra'] }),
    role('extra'),
    role('top', { composites: leaves.slice(0, 63).map((l) => l.id) }),
  );
  assert.deepEqual(codes(grown, 'l0'), ['role_expansion_limit']);
});

test('incompatibility is symmetric and a role may not contain both sides', () => {
  const g = graphOf(role('a', { incompatible: ['b'] }), role('b'), role('c', { composites: ['b'] }));
  assert.deepEqual(incompatiblePair(g, ['b'], ['a']), ['b', 'a']);
  assert.deepEqual(incompatiblePair(g, expand(g, ['c']), ['a']), ['b', 'a']);
  assert.equal(incompatiblePair(g, ['c'], ['c']), null);
  const both = graphOf(role('a', { incompatible: ['b'] }), role('b'), role('ab', { composites: ['a', 'b'] }));
  assert.deepEqual(codes(both, 'ab'), ['incompatible_within_role']);
});
