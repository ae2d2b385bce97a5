// STEP_UP_REQUIRED (docs/authorization.md, evaluation steps 4 and 5): conditional assignments,
// the token resource's scope rules and registered permission sensitivity.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ResourceScope } from '../../../src/resources/resource.ts';
import { checkBody, decisionKit } from './decision-kit.ts';

const reauth = (profile: string, maxAge?: number) => [
  {
    type: 'reauthenticate',
    required_profile: profile,
    ...(maxAge === undefined ? {} : { max_age_seconds: maxAge }),
  },
];

describe('decisions › step-up', () => {
  test('case=an assignment conditioned on MFA or a recent sign-in asks for step-up', async (t) => {
    const k = await decisionKit(t);
    const mfaRole = await k.role('mfa-editor', ['documents.edit']);
    const recentRole = await k.role('recent-publisher', ['documents.publish']);
    const plain = await k.subject({ mfa: false, authAgeSeconds: 600 });
    await k.assign(mfaRole, { type: 'user', id: plain.userId }, undefined, { require_mfa: true });
    await k.assign(recentRole, { type: 'user', id: plain.userId }, undefined, { max_auth_age_seconds: 300 });

    const edit = await k.check(checkBody(plain.token, 'documents.edit'));
    assert.deepEqual([edit.body.allowed, edit.body.reason_code], [false, 'STEP_UP_REQUIRED']);
    assert.deepEqual(edit.body.obligations, reauth('mfa'));
    assert.equal(edit.body.cache_ttl_seconds, 0);
    const publish = await k.check(checkBody(plain.token, 'documents.publish'));
    assert.equal(publish.body.reason_code, 'STEP_UP_REQUIRED');
    assert.deepEqual(publish.body.obligations, reauth('recent', 300));

    const strong = await k.subject({ userId: plain.userId, mfa: true, authAgeSeconds: 10 });
    assert.equal((await k.check(checkBody(strong.token, 'documents.edit'))).body.reason_code, 'ALLOWED');
    assert.equal((await k.check(checkBody(strong.token, 'documents.publish'))).body.reason_code, 'ALLOWED');
  });

  test('case=a scope with step_up_acr or max_auth_age_seconds asks for step-up', async (t) => {
    const rules: ResourceScope[] = [
      { name: 'payments', requiredPermissions: ['payments.send'], stepUpAcr: 'mfa', sensitivity: 'normal' },
      {
        name: 'profile',
        requiredPermissions: ['profile.write'],
        maxAuthAgeSeconds: 120,
        sensitivity: 'normal',
      },
      {
        name: 'keys',
        requiredPermissions: ['keys.rotate'],
        stepUpAcr: 'phishing_resistant',
        sensitivity: 'normal',
      },
    ];
    // Sign-in enforces these rules itself (docs/security.md), so the tokens are issued first and
    // the rules set afterwards: the decision must hold tokens to the rules as they stand now.
    // Tokens live long enough to outlast the sign-ins that age the session.
    const k = await decisionKit(t, {
      scopes: rules.map(({ stepUpAcr: _, maxAuthAgeSeconds: __, ...plain }) => plain),
      tokenTtlSeconds: 1800,
    });
    const role = await k.role('all', ['payments.send', 'profile.write', 'keys.rotate']);
    const basic = await k.subject({ scopes: ['payments', 'profile', 'keys'], authAgeSeconds: 600 });
    await k.assign(role, { type: 'user', id: basic.userId });
    const noScope = await k.subject({ userId: basic.userId, scopes: [], authAgeSeconds: 600 });
    const mfa = await k.subject({ userId: basic.userId, scopes: ['payments', 'profile', 'keys'], mfa: true });
    await k.setScopes(rules);

    const pay = await k.check(checkBody(basic.token, 'payments.send'));
    assert.equal(pay.body.reason_code, 'STEP_UP_REQUIRED');
    assert.deepEqual(pay.body.obligations, reauth('mfa'));
    const profile = await k.check(checkBody(basic.token, 'profile.write'));
    assert.equal(profile.body.reason_code, 'STEP_UP_REQUIRED');
    assert.deepEqual(profile.body.obligations, reauth('recent', 120));

    // The rule binds only tokens carrying the scope.
    assert.equal((await k.check(checkBody(noScope.token, 'payments.send'))).body.reason_code, 'ALLOWED');

    assert.equal((await k.check(checkBody(mfa.token, 'payments.send'))).body.reason_code, 'ALLOWED');
    assert.equal((await k.check(checkBody(mfa.token, 'profile.write'))).body.reason_code, 'ALLOWED');
    // mfa is weaker than phishing_resistant.
    const keys = await k.check(checkBody(mfa.token, 'keys.rotate'));
    assert.deepEqual(keys.body.obligations, reauth('phishing_resistant'));
    // No sign-in step yields acr phishing_resistant yet (no passkeys); acrSatisfies' table test
    // (test/integration/decisions/assurance.test.ts) holds that it meets the rule.
  });

  test('case=high and privileged permissions need MFA, privileged a recent sign-in too', async (t) => {
    const k = await decisionKit(t);
    await k.h.ctx.db.query(
      `insert into permissions (realm_id, name, sensitivity, created_at)
       values ($1, 'billing.refund', 'high', now()), ($1, 'tenants.delete', 'privileged', now())`,
      [k.realm.id],
    );
    const role = await k.role('finance', ['billing.refund', 'tenants.delete']);
    const window = Math.floor(k.h.ctx.config.security.recentAuthWindowMs / 1000);
    const basic = await k.subject({ authAgeSeconds: 5 });
    await k.assign(role, { type: 'user', id: basic.userId });
    const refund = await k.check(checkBody(basic.token, 'billing.refund'));
    assert.equal(refund.body.reason_code, 'STEP_UP_REQUIRED');
    assert.deepEqual(refund.body.obligations, reauth('mfa'));
    const del = await k.check(checkBody(basic.token, 'tenants.delete'));
    assert.deepEqual(del.body.obligations, reauth('mfa', window));

    const oldMfa = await k.subject({ userId: basic.userId, mfa: true, authAgeSeconds: window + 60 });
    assert.equal((await k.check(checkBody(oldMfa.token, 'billing.refund'))).body.reason_code, 'ALLOWED');
    const stale = await k.check(checkBody(oldMfa.token, 'tenants.delete'));
    assert.deepEqual(stale.body.obligations, reauth('recent', window));

    const fresh = await k.subject({ userId: basic.userId, mfa: true, authAgeSeconds: 5 });
    assert.equal((await k.check(checkBody(fresh.token, 'tenants.delete'))).body.reason_code, 'ALLOWED');
  });

  test('case=step-up is never offered for a permission the subject lacks', async (t) => {
    const k = await decisionKit(t);
    await k.h.ctx.db.query(
      `insert into permissions (realm_id, name, sensitivity, created_at) values ($1, 'billing.refund', 'high', now())`,
      [k.realm.id],
    );
    const { token } = await k.subject();
    assert.equal((await k.check(checkBody(token, 'billing.refund'))).body.reason_code, 'NOT_PERMITTED');
  });
});
