// Loads what the evaluation stages need to know about the account, the client and the realm, in
// the step's own database transaction.

import type { ClientRow } from '../clients/index.ts';
import { factorAllowed, hotpAllowed } from '../mfa/factor-rules.ts';
import { hasTrustAnchors, passkeyLoginOn, webauthnFactorAllowed } from '../mfa/index.ts';
import { emailConfigured, smsConfigured } from '../notifications/index.ts';
import type { Config } from '../platform/config/settings.ts';
import { jsonColumn, one, type Queryable } from '../platform/db/db.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { policyValue } from '../realms/index.ts';
import { BUILTIN_ROLES } from '../roles/permissions.ts';
import type { ChallengePurpose } from './challenges.repo.ts';
import {
  type FederationFacts,
  type FederationRow,
  federationArgs,
  federationFactsOf,
  federationSql,
  loadFederationFacts,
} from './federation-facts.ts';
import { loadFlowFacts } from './flow-facts.ts';
import { configuredLoginUi } from './login-ui.ts';
import type { Facts, LoginMethods, UserFacts } from './next-actions.types.ts';
import {
  loadOrganizationFacts,
  NO_ORGANIZATION_FACTS,
  organizationFactsNeeded,
} from './organization-facts.ts';
import {
  allowGuests,
  registrationMode,
  requireApproval,
  requiredProfileFields,
  signInIdentifiers,
  termsVersion,
} from './registration-policy.ts';
import { rememberDevicesOn } from './remembered-device.ts';
import type { SigninTx } from './transaction.ts';

const PRIVILEGED_ROLES = Object.values(BUILTIN_ROLES)
  .filter((r) => r.privileged)
  .map((r) => r.name);

export interface FactsInput {
  config: Config;
  client: ClientRow;
  policy: RealmPolicy;
  adminAudience: string;
  now: Date;
  /** The request presents a client certificate (mutual-TLS listener or trusted proxy). */
  certificatePresented?: boolean;
}

/**
 * Everything the stages read about the transaction's account, in one statement: its row, which
 * factors it holds, its device choice, its challenges and its registration duties. A sign-in step
 * evaluates these once or twice, so statement count here is most of a sign-in's.
 */
const ACCOUNT_COLUMNS = `
  (select json_build_object('id', u.id, 'state', u.state, 'required_actions', u.required_actions,
     'protected', u.protected, 'display_name', u.display_name, 'is_guest', u.is_guest,
     'attributes', u.attributes,
     'email', (select value from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id
                and i.type = 'email' order by i.is_primary desc, i.created_at limit 1),
     'phone', (select value from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id
                and i.type = 'phone' order by i.is_primary desc, i.created_at limit 1))
     from users u where u.realm_id = $1 and u.id = $2::text) as account,
  exists (select 1 from totp_credentials where realm_id = $1 and user_id = $2::text) as totp,
  exists (select 1 from hotp_credentials where realm_id = $1 and user_id = $2::text) as hotp,
  exists (select 1 from webauthn_credentials where realm_id = $1 and user_id = $2::text) as passkey,
  exists (select 1 from recovery_codes where realm_id = $1 and user_id = $2::text and used_at is null) as codes,
  exists (select 1 from role_assignments a join roles r on r.realm_id = a.realm_id and r.id = a.role_id
           where a.realm_id = $1 and a.subject_type = 'user' and a.subject_id = $2::text
             and r.builtin and r.name = any($3)) as privileged,
  (select scopes from consents where realm_id = $1 and user_id = $2::text and client_id = $4) as consent,
  (select json_build_object('remember', remember, 'device_id', device_id) from signin_device_choices
    where realm_id = $1 and transaction_id = $5) as choice,
  array(select purpose from signin_challenges where realm_id = $1 and transaction_id = $5
         and consumed_at is null and expires_at > $6) as sent,
  exists (select 1 from signin_challenges where realm_id = $1 and transaction_id = $5
           and purpose = 'password_reset' and consumed_at is not null) as reset_proved,
  (select state from registration_approvals where realm_id = $1 and user_id = $2::text) as approval,
  exists (select 1 from terms_acceptances where realm_id = $1 and user_id = $2::text and version = $7) as accepted,
  exists (select 1 from client_registrations where realm_id = $1 and client_row_id = $8) as third_party`;

const ACCOUNT_SQL = `select ${ACCOUNT_COLUMNS}`;

/**
 * The account facts with the federation facts (federation-facts.ts) in the same statement, for a
 * transaction that needs no organization facts first ($9 organization ids, $10 email domain).
 */
const WITH_FEDERATION = federationSql({ realm: '$1', orgIds: '$9', domain: '$10', tx: '$5' });
const ACCOUNT_AND_FEDERATION_SQL = `with ${WITH_FEDERATION.cte} select ${ACCOUNT_COLUMNS}, ${WITH_FEDERATION.columns}`;

interface AccountJson {
  id: string;
  state: string;
  required_actions: string[];
  protected: boolean;
  display_name: string | null;
  is_guest: boolean;
  attributes: Record<string, unknown> | null;
  email: string | null;
  phone: string | null;
}

interface AccountRow {
  account: AccountJson | string | null;
  totp: boolean;
  hotp: boolean;
  passkey: boolean;
  codes: boolean;
  privileged: boolean;
  consent: string[] | null;
  choice: { remember: boolean | null; device_id: string | null } | string | null;
  sent: ChallengePurpose[];
  reset_proved: boolean;
  approval: string | null;
  accepted: boolean;
  third_party: boolean;
}

function userFacts(u: AccountJson): UserFacts {
  return {
    id: u.id,
    state: u.state,
    requiredActions: u.required_actions,
    protected: u.protected,
    displayName: u.display_name,
    email: u.email,
    phone: u.phone,
    isGuest: u.is_guest,
  };
}

export async function loadFacts(q: Queryable, t: SigninTx, input: FactsInput): Promise<Facts> {
  const version = termsVersion(input.policy);
  const params = [
    t.realmId,
    t.userId,
    PRIVILEGED_ROLES,
    t.clientId,
    t.id,
    input.now,
    version ?? '',
    input.client.id,
  ];
  // Without organization facts to read first, the federation facts come in the same statement.
  const withFederation = !organizationFactsNeeded(t);
  let federation: FederationFacts | null = null;
  let row: AccountRow;
  if (withFederation) {
    const { orgIds, domain } = federationArgs(t, NO_ORGANIZATION_FACTS);
    const both = await one<AccountRow & FederationRow>(q, ACCOUNT_AND_FEDERATION_SQL, [
      ...params,
      orgIds,
      domain,
    ]);
    federation = federationFactsOf(t, both);
    row = both;
  } else {
    row = await one<AccountRow>(q, ACCOUNT_SQL, params);
  }
  const account = jsonColumn<AccountJson | null>(row.account);
  const user = account ? userFacts(account) : null;
  const choice = user
    ? jsonColumn<{ remember: boolean | null; device_id: string | null } | null>(row.choice)
    : null;
  const rememberedDevice = choice?.device_id != null;
  const consent = user ? row.consent : null;
  const flow = user ? await loadFlowFacts(q, t, input.policy, rememberedDevice, input.now) : undefined;
  const organization = await loadOrganizationFacts(q, t, input.now);
  return {
    user,
    ...(flow ? { flow } : {}),
    rememberedDevice,
    offerRememberDevice: rememberDevicesOn(input.policy) && (choice?.remember ?? null) === null,
    // mfa.allowed_factors: a factor the realm leaves out is not offered, even when enrolled.
    hasTotp: !!user && row.totp && factorAllowed(input.policy, 'totp'),
    totpAllowed: factorAllowed(input.policy, 'totp'),
    hasHotp: !!user && row.hotp && hotpAllowed(input.policy),
    hasRecoveryCodes: !!user && row.codes && factorAllowed(input.policy, 'recovery_code'),
    hasWebauthn: !!user && row.passkey && webauthnFactorAllowed(input.policy),
    webauthnAllowed: webauthnFactorAllowed(input.policy),
    adminPhishingResistant: policyValue(input.policy, 'mfa', 'admin_phishing_resistant') === true,
    privileged: !!user && row.privileged,
    client: {
      consentMode: input.client.consent_mode,
      requireMfa: input.client.require_mfa,
      thirdParty: row.third_party,
    },
    mfaRequirement: policyValue(input.policy, 'mfa', 'requirement') === 'required' ? 'required' : 'optional',
    adminAudienceRequested:
      t.resources.includes(input.adminAudience) || t.resources.includes('builtin:admin'),
    consentCovers: consent ? t.scopes.every((s) => consent.includes(s)) : false,
    organization,
    federation: federation ?? (await loadFederationFacts(q, t, organization)),
    methods: { ...loginMethods(input), certificates: await certificatesOffered(q, t.realmId, input) },
    sent: row.sent,
    resetProved: !!user && row.reset_proved,
    ...accountDuties(input.policy, user ? row : null, account?.attributes ?? {}),
  };
}

/** The realm's sign-in methods this deployment can run (mail and SMS need their transports). */
export function loginMethods(input: Pick<FactsInput, 'config' | 'policy'>): LoginMethods {
  const flag = (m: string) => policyValue(input.policy, 'login', m) === true;
  const email = emailConfigured(input.config.delivery);
  return {
    // The password flag is on unless the policy turns it off (the default policy sets it).
    password: policyValue(input.policy, 'login', 'password') !== false,
    mail: email,
    sms: smsConfigured(input.config.delivery),
    emailOtp: flag('email_otp') && email,
    magicLink: flag('magic_link') && email && configuredLoginUi(input, input.policy) !== null,
    smsOtp: flag('sms_otp') && smsConfigured(input.config.delivery),
    passkeys: passkeyLoginOn(input.policy),
  };
}

/**
 * Certificate sign-in (login.certificates) for this request: it presents a certificate and the
 * realm trusts some CA; the anchors are read only then.
 */
async function certificatesOffered(q: Queryable, realmId: string, input: FactsInput): Promise<boolean> {
  if (input.certificatePresented !== true) return false;
  if (policyValue(input.policy, 'login', 'certificates') !== true) return false;
  return hasTrustAnchors(q, realmId);
}

/** Registration approval, terms and profile duties of the account (spec doc 1, evaluation order 6). */
function accountDuties(
  policy: RealmPolicy,
  row: Pick<AccountRow, 'approval' | 'accepted'> | null,
  attributes: Record<string, unknown>,
): Pick<Facts, 'signup' | 'terms' | 'profile'> {
  const required = requiredProfileFields(policy);
  const filled = (v: unknown) => v !== undefined && v !== null && v !== '';
  return {
    signup: {
      mode: registrationMode(policy),
      requireApproval: requireApproval(policy),
      allowGuests: allowGuests(policy),
      usernames: signInIdentifiers(policy).includes('username'),
      approvalPending: row?.approval === 'pending' || row?.approval === 'denied',
    },
    terms: { version: termsVersion(policy), accepted: row?.accepted ?? false },
    profile: { required, missing: required.filter((f) => !filled(attributes[f])) },
  };
}
