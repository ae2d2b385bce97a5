import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { effectiveClaims, effectiveConfig } from '../identity-providers/index.ts';
import { identityOf } from './upstream-identity.ts';

const oidc = { adapter: 'generic', kind: 'oidc', config: {}, claim_mapping: {} } as const;
const github = { adapter: 'github', kind: 'oauth2', config: {}, claim_mapping: {} } as const;
const apple = { adapter: 'apple', kind: 'oidc', config: {}, claim_mapping: {} } as const;

const of = (c: typeof oidc | typeof github | typeof apple, claims: Record<string, unknown>, trust = false) =>
  identityOf('https://up.example.com', claims, effectiveClaims(c), {
    ...effectiveConfig(c),
    ...(trust ? { trust_email: true } : {}),
  });

describe('federation › upstream identity', () => {
  test('case=the mapping names the claims; an email counts as verified only when the upstream says so', () => {
    const a = of(oidc, { sub: 'u1', email: 'a@example.com', email_verified: true, name: 'Ada' });
    assert.deepEqual(
      [a?.subject, a?.email, a?.emailVerified, a?.name, a?.mfa],
      ['u1', 'a@example.com', true, 'Ada', false],
    );
    assert.equal(of(oidc, { sub: 'u1', email: 'a@example.com' })?.emailVerified, false);
    assert.equal(
      of(oidc, { sub: 'u1', email: 'a@example.com', email_verified: 'yes' })?.emailVerified,
      false,
    );
    assert.equal(of(oidc, { sub: 'u1', email: 'a@example.com' }, true)?.emailVerified, true, 'trust_email');
    assert.equal(
      of(apple, { sub: 'u1', email: 'a@example.com', email_verified: 'true' })?.emailVerified,
      true,
    );
    assert.equal(of(oidc, { sub: 'u1', email: 'not an address', email_verified: true })?.email, null);
  });

  test('case=GitHub subjects are numbers; a missing or unusable subject is no identity', () => {
    assert.equal(of(github, { id: 4711, login: 'ada' })?.subject, '4711');
    assert.equal(of(github, { id: 4711, login: 'ada' })?.preferredUsername, 'ada');
    assert.equal(of(oidc, { email: 'a@example.com' }), null);
    assert.equal(of(oidc, { sub: '' }), null);
    assert.equal(of(oidc, { sub: 'x'.repeat(256) }), null);
    assert.equal(of(oidc, { sub: 'a\nb' }), null);
  });

  test('case=upstream MFA is read from amr or acr as the connection names them', () => {
    assert.equal(of(oidc, { sub: 'u', amr: ['pwd', 'mfa'] })?.mfa, true);
    assert.equal(of(oidc, { sub: 'u', amr: ['pwd'] })?.mfa, false);
    assert.equal(of(oidc, { sub: 'u', acr: 'mfa' })?.mfa, true);
    assert.equal(of(oidc, { sub: 'u', acr: 'basic' })?.mfa, false);
    assert.equal(of(github, { id: 1, amr: ['mfa'] })?.mfa, false, 'no MFA values for plain OAuth');
  });
});
