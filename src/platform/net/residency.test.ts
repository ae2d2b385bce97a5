import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeDestinationPattern, residencyAllows } from './residency.ts';

test('nothing listed: every host may be reached', () => {
  assert.equal(residencyAllows('hooks.example.com', []), true);
});

test('exact names and *.domain patterns; the domain itself is not under its wildcard', () => {
  const p = ['hooks.eu.example.com', '*.eu.example.net'].map(normalizeDestinationPattern);
  assert.equal(residencyAllows('hooks.eu.example.com', p), true);
  assert.equal(residencyAllows('HOOKS.eu.example.com.', p), true, 'case and a trailing dot do not matter');
  assert.equal(residencyAllows('a.b.eu.example.net', p), true);
  assert.equal(residencyAllows('eu.example.net', p), false);
  assert.equal(residencyAllows('evil-eu.example.net', p), false, 'a suffix must start at a label');
  assert.equal(residencyAllows('hooks.us.example.com', p), false);
  assert.equal(residencyAllows('hooks.eu.example.com.attacker.io', p), false);
});

test('international names compare in their ASCII form', () => {
  const p = [normalizeDestinationPattern('*.bücher.example')];
  assert.equal(residencyAllows('shop.xn--bcher-kva.example', p), true);
  assert.equal(residencyAllows('shop.bücher.example', p), true);
});

test('IP literals match only when listed as such', () => {
  const p = ['[2001:db8::1]', '203.0.113.9'].map(normalizeDestinationPattern);
  assert.equal(residencyAllows('[2001:db8::1]', p), true);
  assert.equal(residencyAllows('2001:db8::1', p), true);
  assert.equal(residencyAllows('203.0.113.9', p), true);
  assert.equal(residencyAllows('203.0.113.10', p), false);
});

test('patterns that are not host names are refused', () => {
  for (const bad of ['', '*', '*.', 'https://x.example', 'a b.example', '*.*.example', 'x.example/path'])
    assert.throws(() => normalizeDestinationPattern(bad), /not a host name/);
});
