import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPolicyPatch, mergePolicy, planPolicy, policyRuleIssues, samePolicy } from './policy-check.ts';
import { defaultRealmPolicy } from './policy-defaults.ts';

const OPTS = { relatedOriginsEnabled: false, production: false };
const codes = (issues: { path: readonly (string | number)[]; code: string }[]) =>
  issues.map((i) => `${i.path.join('.')}:${i.code}`);
const plan = (patch: unknown, stored = defaultRealmPolicy(), opts = OPTS) =>
  planPolicy(stored, patch, defaultRealmPolicy(), opts);

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

test('the default policy of a new realm passes every rule', () => {
  assert.deepEqual(checkPolicyPatch(defaultRealmPolicy()).issues, []);
  assert.deepEqual(policyRuleIssues(defaultRealmPolicy(), OPTS), []);
});

test('members are checked against their type, range and values; unknown ones are refused', () => {
  const r = checkPolicyPatch({
    audit: { retention_days: 3651 },
    mfa: { hotp: { look_ahead: 51 }, allowed_factors: ['totp', 'sms'] },
    login: { remember_device_days: 91, password: 'yes' },
    recovery: { cooling_off_hours: -1 },
    lifecycle: { dormant_action: 'delete', guest_ttl_days: 3651 },
    policy_engine: { mode: 'maybe' },
    extensions: { plugin_review: 'nobody' },
    shared_signals: { enabled: 1 },
    client_registration: { open_scopes: ['openid', 'admin'] },
    webauthn: { allowed_aaguids: ['ABC'], origins: ['https://a.example/path'] },
    sessions: { bogus: 1 },
    unknown_section: {},
  });
  assert.deepEqual(codes(r.issues).sort(), [
    'audit.retention_days:too_large',
    'client_registration.open_scopes.1:not_allowed',
    'extensions.plugin_review:not_allowed',
    'lifecycle.dormant_action:not_allowed',
    'lifecycle.guest_ttl_days:too_large',
    'login.password:type',
    'login.remember_device_days:too_large',
    'mfa.allowed_factors.1:not_allowed',
    'mfa.hotp.look_ahead:too_large',
    'policy_engine.mode:not_allowed',
    'recovery.cooling_off_hours:too_small',
    'sessions.bogus:unknown_member',
    'shared_signals.enabled:type',
    'unknown_section:unknown_member',
    'webauthn.allowed_aaguids.0:pattern',
    'webauthn.origins.0:pattern',
  ]);
});

test('member names match ignoring ASCII case and are stored canonically; null is absent', () => {
  const r = checkPolicyPatch({ MFA: { Requirement: 'required' }, data_access: null });
  assert.deepEqual(r.issues, []);
  assert.deepEqual(r.value, { mfa: { requirement: 'required' } });
});

test('rules spanning members are checked on the merged result', () => {
  const cases: [unknown, string[]][] = [
    [{ login: { password: false } }, ['login:no_sign_in_method']],
    [{ registration: { mode: 'domain_restricted' } }, ['registration.allowed_domains:required']],
    [{ registration: { mode: 'domain_restricted', allowed_domains: ['example.com'] } }, []],
    [{ webauthn: { rp_id: 'example.com' } }, ['webauthn.origins:required']],
    [
      { webauthn: { rp_id: 'example.com', origins: ['https://login.example.com', 'https://evil.test'] } },
      ['webauthn.origins.1:outside_rp_id'],
    ],
    [{ login: { sms_otp: true } }, ['login.identifiers:phone_identifier_required']],
    [{ login: { sms_otp: true, identifiers: ['phone'] } }, []],
    [
      { profile: { required_fields: ['given_name', 'employee_no'] } },
      ['profile.required_fields.1:unknown_attribute'],
    ],
    [{ profile: { attributes: [{ name: 'employee_no' }], required_fields: ['employee_no'] } }, []],
    [
      {
        webauthn: {
          allowed_aaguids: ['00000000-0000-0000-0000-000000000001'],
          blocked_aaguids: ['00000000-0000-0000-0000-000000000002'],
        },
      },
      ['webauthn.blocked_aaguids:conflict'],
    ],
    [
      { webauthn: { require_trusted_attestation: true } },
      ['webauthn.require_trusted_attestation:attestation_required'],
    ],
    [
      { webauthn: { enforce_credential_protection: true } },
      ['webauthn.enforce_credential_protection:credential_protection_required'],
    ],
    [
      { webauthn: { related_origins: ['https://other.example'] } },
      ['webauthn.related_origins:feature_disabled', 'webauthn.rp_id:required'],
    ],
    [
      { mfa: { requirement: 'required', allowed_factors: ['recovery_code'] } },
      ['mfa.allowed_factors:no_second_factor'],
    ],
    [{ mfa: { hotp: { look_ahead: 20, resync_window: 15 } } }, ['mfa.hotp.resync_window:too_small']],
    [{ policy_engine: { mode: 'decide' } }, ['policy_engine.name:required']],
    [
      { authentication_flow: { rules: [{ outcome: 'challenge' }] } },
      ['authentication_flow.rules.0.outcome:challenge_provider_required'],
    ],
    [{ authentication_flow: { rules: [{ outcome: 'challenge' }], email_code_alternative: true } }, []],
    [{ client_registration: { open: true } }, ['client_registration.open:requires_enabled']],
  ];
  for (const [patch, expected] of cases)
    assert.deepEqual(codes(plan(patch).issues), expected, JSON.stringify(patch));
  assert.deepEqual(
    codes(
      plan({ interaction: { login_ui_url: 'http://ui.example' } }, undefined, { ...OPTS, production: true })
        .issues,
    ),
    ['interaction.login_ui_url:https_required'],
  );
});

test('a plan says whether the policy changes, and which sections; empty lists equal omitted ones', () => {
  assert.equal(plan({ login: { password: true } }).changed, false);
  const p = plan({ mfa: { requirement: 'required' }, data_access: { log_identity_reads: true } });
  assert.equal(p.changed, true);
  assert.deepEqual(p.sections, ['data_access', 'mfa']);
  assert.ok(samePolicy({ webauthn: { origins: [] } }, {}));
  assert.deepEqual(plan(null, { login: { password: true } }).merged, defaultRealmPolicy());
});
