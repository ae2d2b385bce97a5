import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExpression } from './expression.ts';
import { compileType } from './model.ts';

test('expressions: operators group from the left, parentheses and arrows', () => {
  const e = parseExpression('a + b - c');
  assert.ok(e.ok);
  assert.deepEqual(e.expr, {
    kind: 'exclusion',
    left: { kind: 'union', left: { kind: 'name', name: 'a' }, right: { kind: 'name', name: 'b' } },
    right: { kind: 'name', name: 'c' },
  });
  const p = parseExpression('(viewer & editor) + parent->view');
  assert.ok(p.ok);
  assert.equal(p.expr.kind, 'union');
  for (const bad of ['', 'a +', '+ a', 'a b', '(a', 'a)', 'A', 'a->', 'a -> (b)', 'a # b']) {
    assert.equal(parseExpression(bad).ok, false, bad);
  }
});

test('types: references, arrows, cycles and limits', () => {
  const ok = compileType('doc', {
    relations: { owner: ['user'], parent: ['folder'] },
    permissions: { view: 'owner + parent->view' },
  });
  assert.ok(ok.ok);
  const cases: [Record<string, string[]>, Record<string, string>][] = [
    [{ owner: ['user'] }, { view: 'viewer' }],
    [{ owner: ['user'] }, { view: 'edit', edit: 'view' }],
    [{ owner: ['user'] }, { view: 'edit->x', edit: 'owner' }],
    [{ owner: ['user'] }, { owner: 'owner' }],
    [{ owner: ['user#'] }, { view: 'owner' }],
    [{}, { view: 'owner' }],
    [{ owner: ['user'] }, {}],
  ];
  for (const [relations, permissions] of cases) {
    assert.equal(
      compileType('doc', { relations, permissions }).ok,
      false,
      JSON.stringify([relations, permissions]),
    );
  }
  const relations = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`r${i}`, ['user']]));
  assert.equal(compileType('doc', { relations, permissions: { p: 'r0' } }).ok, false);
});
