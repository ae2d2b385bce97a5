// The organization stages as a table: what the transaction names, what the account holds, and
// what the evaluation answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FederationFacts, FederationOutcome, ProviderOption } from './federation-facts.ts';
import { evaluate } from './next-actions.ts';
import type { Facts } from './next-actions.types.ts';
import type { OrganizationFacts, OrgFacts } from './organization-facts.ts';
import { organizationInEffect, withOrganization } from './organization-rules.ts';
import type { SigninTx } from './transaction.ts';

const org = (id: string, o: Partial<OrgFacts> = {}): OrgFacts => ({
  id,
  slug: id,
  displayName: id,
  active: true,
  member: true,
  mfaRequired: false,
  requireSso: false,
  ...o,
});

const tx = (o: Partial<SigninTx> = {}): SigninTx => ({
  realmId: 'rlm_1',
  id: 'atx_1',
  mode: 'headless',
  status: 'pending',
  intent: 'login',
  clientId: 'web-app',
  redirectUri: 'https://app.example.com/cb',
  responseMode: 'query',
  scopes: ['openid'],
  resources: [],
  state: null,
  nonce: null,
  codeChallenge: 'x',
  prompt: [],
  maxAge: null,
  acrValues: [],
  loginHint: null,
  uiLocales: null,
  userAgent: null,
  organization: null,
  organizationId: null,
  identifier: 'alice@example.com',
  userId: 'usr_1',
  completedFactors: ['pwd'],
  failures: 0,
  error: null,
  rememberMe: false,
  transient: false,
  consentScopes: null,
  pendingTotpSealed: null,
  registrationDecoy: null,
  sessionId: null,
  accountConfirmed: false,
  redirectTo: null,
  expiresAt: new Date(0),
  createdAt: new Date(0),
  updatedAt: new Date(0),
  completedAt: null,
  ...o,
});

const facts = (organization: Partial<OrganizationFacts>, o: Partial<Facts> = {}): Facts => ({
  user: {
    id: 'usr_1',
    state: 'active',
    requiredActions: [],
    protected: false,
    displayName: null,
    email: null,
    phone: null,
    isGuest: false,
  },
  hasTotp: false,
  hasRecoveryCodes: false,
  privileged: false,
  client: { consentMode: 'implicit', requireMfa: false },
  mfaRequirement: 'optional',
  adminAudienceRequested: false,
  consentCovers: true,
  organization: { required: false, named: null, choices: [], ...organization },
  methods: { password: true, mail: false, sms: false, emailOtp: false, magicLink: false, smsOtp: false },
  sent: [],
  resetProved: false,
  signup: { mode: 'closed', requireApproval: false, allowGuests: false, approvalPending: false },
  terms: { version: null, accepted: false },
  profile: { required: [], missing: [] },
  ...o,
});

const provider = (orgId: string | null): ProviderOption => ({
  id: `idp_${orgId ?? 'realm'}`,
  alias: orgId ?? 'realm',
  displayName: orgId ?? 'realm',
  adapter: 'generic',
  organizationId: orgId,
});

const withProvider = (orgId: string): FederationFacts => ({
  realmProviders: [],
  orgProviders: { [orgId]: [provider(orgId)] },
  hrd: null,
  outcome: null,
});

const outcome = (orgId: string): FederationOutcome => ({
  providerId: `idp_${orgId}`,
  provider: provider(orgId),
  providerOrgId: orgId,
  status: 'authenticated',
  conflict: false,
  linkingPolicy: 'prove_existing',
  email: null,
});

const answer = (t: SigninTx, f: Facts): string => {
  const e = evaluate(t, f);
  return e.kind === 'blocked'
    ? e.reason
    : e.kind === 'actions'
      ? e.actions.map((a) => a.type).join(',')
      : 'complete';
};

test('organization stages', () => {
  const a = org('org_a');
  const b = org('org_b');
  const rows: [string, SigninTx, Facts, string, string | null][] = [
    ['nothing asks for one', tx(), facts({ choices: [a, b] }), 'complete', null],
    ['required, no membership', tx(), facts({ required: true }), 'no_organization', null],
    ['required, one membership', tx(), facts({ required: true, choices: [a] }), 'complete', 'org_a'],
    ['required, two', tx(), facts({ required: true, choices: [a, b] }), 'select_organization', null],
    [
      'chosen and usable',
      tx({ organizationId: 'org_b' }),
      facts({ required: true, named: b, choices: [a, b] }),
      'complete',
      'org_b',
    ],
    [
      'chosen, unknown',
      tx({ organizationId: 'org_x' }),
      facts({ required: true, choices: [a, b] }),
      'organization_access_denied',
      null,
    ],
    [
      'named, not a member',
      tx({ organization: 'org_c' }),
      facts({ named: org('org_c', { member: false }), choices: [a] }),
      'organization_access_denied',
      null,
    ],
    [
      'named, organization suspended',
      tx({ organization: 'org_c' }),
      facts({ named: org('org_c', { active: false }) }),
      'organization_access_denied',
      null,
    ],
    [
      'named without a resource needing one',
      tx({ organization: 'org_a' }),
      facts({ named: a }),
      'complete',
      'org_a',
    ],
    [
      'mfa_required once known, no authenticator',
      tx(),
      facts({ required: true, choices: [org('org_m', { mfaRequired: true })] }),
      'enroll_totp,enroll_webauthn',
      'org_m',
    ],
    [
      'mfa_required once known, with TOTP',
      tx(),
      facts({ required: true, choices: [org('org_m', { mfaRequired: true })] }, { hasTotp: true }),
      'totp',
      'org_m',
    ],
    [
      'mfa_required of an organization the account cannot enter',
      tx({ organization: 'org_m' }),
      facts({ named: org('org_m', { mfaRequired: true, member: false }) }),
      'organization_access_denied',
      null,
    ],
    [
      'require_sso named at the start, no provider for this client: before any local factor',
      tx({ organization: 'org_s', completedFactors: [], userId: null, identifier: null }),
      facts({ named: org('org_s', { requireSso: true }) }),
      'connection_not_allowed',
      'org_s',
    ],
    [
      'require_sso named at the start: only its provider',
      tx({ organization: 'org_s', completedFactors: [], userId: null, identifier: null }),
      facts({ named: org('org_s', { requireSso: true }) }, { federation: withProvider('org_s') }),
      'external_redirect',
      'org_s',
    ],
    [
      'require_sso selected, no provider for this client',
      tx({ organizationId: 'org_s' }),
      facts({ required: true, named: org('org_s', { requireSso: true }) }),
      'connection_not_allowed',
      'org_s',
    ],
    [
      'require_sso selected after a local sign-in: its provider (step 8)',
      tx({ organizationId: 'org_s' }),
      facts(
        { required: true, named: org('org_s', { requireSso: true }) },
        { federation: withProvider('org_s') },
      ),
      'external_redirect',
      'org_s',
    ],
    [
      'require_sso entered through its own provider',
      tx({ organizationId: 'org_s', completedFactors: ['fed'] }),
      facts(
        { required: true, named: org('org_s', { requireSso: true }) },
        { federation: { ...withProvider('org_s'), outcome: outcome('org_s') } },
      ),
      'complete',
      'org_s',
    ],
    [
      'require_sso, signed in through another organization provider',
      tx({ organizationId: 'org_s', completedFactors: ['fed'] }),
      facts(
        { required: true, named: org('org_s', { requireSso: true }) },
        { federation: { ...withProvider('org_s'), outcome: outcome('org_x') } },
      ),
      'external_redirect',
      'org_s',
    ],
  ];
  for (const [name, t, f, expected, inEffect] of rows) {
    assert.equal(answer(t, f), expected, name);
    assert.equal(organizationInEffect(t, f)?.id ?? null, inEffect, `${name}: organization in effect`);
    assert.equal(withOrganization(t, f).organizationId, inEffect, `${name}: recorded at completion`);
  }
});
