// Loads what the evaluation stages need to know about the account, the client and the realm, in
// the step's own database transaction.

import type { ClientRow } from '../clients/index.ts';
import { hotpAllowed } from '../mfa/factor-rules.ts';
import { passkeyLoginOn, webauthnFactorAllowed } from '../mfa/index.ts';
import { emailConfigured, smsConfigured } from '../notifications/index.ts';
import type { Config } from '../platform/config/settings.ts';
import type { Queryable } from '../platform/db/db.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { policyValue } from '../realms/index.ts';
import { BUILTIN_ROLES } from '../roles/permissions.ts';
import { liveChallengePurposes, provedChallenge } from './challenges.repo.ts';
import { findDeviceChoice } from './device-choices.repo.ts';
import { loadFederationFacts } from './federation-facts.ts';
import { loadFlowFacts } from './flow-facts.ts';
import { configuredLoginUi } from './login-ui.ts';
import type { Facts, LoginMethods, UserFacts } from './next-actions.types.ts';
import { loadOrganizationFacts } from './organization-facts.ts';
import {
  allowGuests,
  registrationMode,
  requireApproval,
  requiredProfileFields,
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
}

async function loadUser(q: Queryable, realmId: string, userId: string): Promise<UserFacts | null> {
  const r = await q.query<{
    id: string;
    state: string;
    required_actions: string[];
    protected: boolean;
    display_name: string | null;
    email: string | null;
    phone: string | null;
    is_guest: boolean;
  }>(
    `select u.id, u.state, u.required_actions, u.protected, u.display_name, u.is_guest,
            (select value from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id
              and i.type = 'email' order by i.is_primary desc, i.created_at limit 1) as email,
            (select value from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id
              and i.type = 'phone' order by i.is_primary desc, i.created_at limit 1) as phone
       from users u where u.realm_id = $1 and u.id = $2`,
    [realmId, userId],
  );
  const u = r.rows[0];
  return u
    ? {
        id: u.id,
        state: u.state,
        requiredActions: u.required_actions,
        protected: u.protected,
        displayName: u.display_name,
        email: u.email,
        phone: u.phone,
        isGuest: u.is_guest,
      }
    : null;
}

export async function loadFacts(q: Queryable, t: SigninTx, input: FactsInput): Promise<Facts> {
  const user = t.userId ? await loadUser(q, t.realmId, t.userId) : null;
  let hasTotp = false;
  let hasHotp = false;
  let hasPasskey = false;
  let hasRecoveryCodes = false;
  let privileged = false;
  let consentCovers = false;
  if (user) {
    const r = await q.query<{
      totp: boolean;
      hotp: boolean;
      passkey: boolean;
      codes: boolean;
      privileged: boolean;
      consent: string[] | null;
    }>(
      `select
         exists (select 1 from totp_credentials where realm_id = $1 and user_id = $2) as totp,
         exists (select 1 from hotp_credentials where realm_id = $1 and user_id = $2) as hotp,
         exists (select 1 from webauthn_credentials where realm_id = $1 and user_id = $2) as passkey,
         exists (select 1 from recovery_codes where realm_id = $1 and user_id = $2 and used_at is null) as codes,
         exists (select 1 from role_assignments a join roles r on r.realm_id = a.realm_id and r.id = a.role_id
                  where a.realm_id = $1 and a.subject_type = 'user' and a.subject_id = $2
                    and r.builtin and r.name = any($3)) as privileged,
         (select scopes from consents where realm_id = $1 and user_id = $2 and client_id = $4) as consent`,
      [t.realmId, user.id, PRIVILEGED_ROLES, t.clientId],
    );
    const row = r.rows[0];
    hasTotp = row?.totp ?? false;
    hasHotp = (row?.hotp ?? false) && hotpAllowed(input.policy);
    hasPasskey = row?.passkey ?? false;
    hasRecoveryCodes = row?.codes ?? false;
    privileged = row?.privileged ?? false;
    consentCovers = row?.consent ? t.scopes.every((s) => row.consent?.includes(s)) : false;
  }
  const choice = user ? await findDeviceChoice(q, t.realmId, t.id) : null;
  const flow = user
    ? await loadFlowFacts(q, t, input.policy, choice?.deviceId != null, input.now)
    : undefined;
  const organization = await loadOrganizationFacts(q, t, input.now);
  return {
    user,
    ...(flow ? { flow } : {}),
    rememberedDevice: choice?.deviceId != null,
    offerRememberDevice: rememberDevicesOn(input.policy) && choice?.remember === null,
    hasTotp,
    hasHotp,
    hasRecoveryCodes,
    hasWebauthn: hasPasskey && webauthnFactorAllowed(input.policy),
    webauthnAllowed: webauthnFactorAllowed(input.policy),
    adminPhishingResistant: policyValue(input.policy, 'mfa', 'admin_phishing_resistant') === true,
    privileged,
    client: { consentMode: input.client.consent_mode, requireMfa: input.client.require_mfa },
    mfaRequirement: policyValue(input.policy, 'mfa', 'requirement') === 'required' ? 'required' : 'optional',
    adminAudienceRequested:
      t.resources.includes(input.adminAudience) || t.resources.includes('builtin:admin'),
    consentCovers,
    organization,
    federation: await loadFederationFacts(q, t, organization),
    methods: loginMethods(input),
    sent: await liveChallengePurposes(q, t.realmId, t.id, input.now),
    resetProved: user ? await provedChallenge(q, t.realmId, t.id, 'password_reset') : false,
    ...(await loadAccountDuties(q, t.realmId, user?.id ?? null, input.policy)),
  };
}

function loginMethods(input: FactsInput): LoginMethods {
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

/** Registration approval, terms and profile duties of the account (spec doc 1, evaluation order 6). */
async function loadAccountDuties(
  q: Queryable,
  realmId: string,
  userId: string | null,
  policy: RealmPolicy,
): Promise<Pick<Facts, 'signup' | 'terms' | 'profile'>> {
  const version = termsVersion(policy);
  const required = requiredProfileFields(policy);
  let approvalPending = false;
  let accepted = false;
  let attributes: Record<string, unknown> = {};
  if (userId) {
    const r = await q.query<{
      approval: string | null;
      accepted: boolean;
      attributes: Record<string, unknown>;
    }>(
      `select (select state from registration_approvals where realm_id = $1 and user_id = $2) as approval,
              exists (select 1 from terms_acceptances where realm_id = $1 and user_id = $2 and version = $3) as accepted,
              (select attributes from users where realm_id = $1 and id = $2) as attributes`,
      [realmId, userId, version ?? ''],
    );
    const row = r.rows[0];
    approvalPending = row?.approval === 'pending' || row?.approval === 'denied';
    accepted = row?.accepted ?? false;
    attributes = row?.attributes ?? {};
  }
  const filled = (v: unknown) => v !== undefined && v !== null && v !== '';
  return {
    signup: {
      mode: registrationMode(policy),
      requireApproval: requireApproval(policy),
      allowGuests: allowGuests(policy),
      approvalPending,
    },
    terms: { version, accepted },
    profile: { required, missing: required.filter((f) => !filled(attributes[f])) },
  };
}
