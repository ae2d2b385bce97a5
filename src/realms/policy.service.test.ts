import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergePolicy } from './policy.service.ts';

test('mergePolicy replaces members, merging objects member by member and lists whole', () => {
  const stored = {
    login: { password: true, identifiers: ['email', 'username'] },
    mfa: { requirement: 'optional' },
  };
  assert.deepEqual(
    mergePolicy(stored, { login: { identifiers: ['email'] }, interaction: { login_ui_url: 'https://x' } }),
    {
      login: { password: true, identifiers: ['email'] },
      mfa: { requirement: 'optional' },
      interaction: { login_ui_url: 'https://x' },
    },
  );
  assert.deepEqual(stored.login.identifiers, ['email', 'username'], 'the stored policy is not mutated');
});
