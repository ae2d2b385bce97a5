// The vocabulary of next-action evaluation (document 1, evaluation order of actions): what an
// action offers, the facts loaded for a transaction, and what evaluating them gives.
import type { ChallengePurpose } from './challenges.repo.ts';
import type { FederationFacts } from './federation-facts.ts';
import type { FlowFacts } from './flow-facts.ts';
import type { OrganizationFacts } from './organization-facts.ts';
import type { RegistrationMode } from './registration-policy.ts';
import type { BlockingReason } from './transaction.ts';

export type ActionType =
  | 'select_account'
  | 'identify'
  | 'password'
  | 'totp'
  | 'hotp'
  | 'certificate'
  | 'recovery_code'
  | 'enroll_totp'
  | 'webauthn'
  | 'enroll_webauthn'
  | 'update_password'
  | 'select_organization'
  | 'consent'
  | 'email_otp'
  | 'sms_otp'
  | 'magic_link'
  | 'verify_email'
  | 'verify_contact'
  | 'register'
  | 'accept_terms'
  | 'complete_profile'
  | 'cancel_deletion'
  | 'remember_device'
  | 'challenge'
  | 'external_redirect'
  | 'link_account';

export interface NextAction {
  type: ActionType;
  required: boolean;
  fields: string[];
  options?: Record<string, unknown>;
}

export interface UserFacts {
  id: string;
  state: string;
  requiredActions: string[];
  protected: boolean;
  displayName: string | null;
  email: string | null;
  phone: string | null;
  isGuest: boolean;
}

/** Primary methods the realm's policy and this deployment allow (spec doc 1, evaluation order 2). */
export interface LoginMethods {
  password: boolean;
  /** A mail transport is configured (codes for verify_email can be sent). */
  mail: boolean;
  /** An SMS adapter is configured (codes for verify_contact can be sent). */
  sms: boolean;
  /** login.email_otp and a mail transport */
  emailOtp: boolean;
  /** login.magic_link, a mail transport and a usable login UI */
  magicLink: boolean;
  /** login.sms_otp and an SMS adapter */
  smsOtp: boolean;
  /** login.passkeys: passwordless sign-in with a discoverable passkey. */
  passkeys?: boolean;
  /**
   * login.certificates, the realm has a certificate trust anchor, and this request presents a
   * client certificate (mutual-TLS listener or trusted proxy).
   */
  certificates?: boolean;
}

export interface Facts {
  user: UserFacts | null;
  /** An authenticator app that counts: enrolled and mfa.allowed_factors lists totp. */
  hasTotp: boolean;
  /** mfa.allowed_factors lists totp (an authenticator app may be enrolled); undefined: yes. */
  totpAllowed?: boolean;
  /** An HOTP token that counts: enrolled and mfa.allowed_factors lists hotp. */
  hasHotp?: boolean;
  /** The authentication-flow rule that matched (undefined: the realm has none, or no account yet). */
  flow?: FlowFacts;
  /** A live remembered device of the account was presented in this transaction. */
  rememberedDevice?: boolean;
  /** login.remember_devices is on and the user has not answered remember_device yet. */
  offerRememberDevice?: boolean;
  /** Unused recovery codes that count: mfa.allowed_factors lists recovery_code. */
  hasRecoveryCodes: boolean;
  /** The account has a passkey and mfa.allowed_factors lets it count as a second factor. */
  hasWebauthn?: boolean;
  /** mfa.allowed_factors lists webauthn (passkeys may be enrolled as a second factor). */
  webauthnAllowed?: boolean;
  /** mfa.admin_phishing_resistant: privileged accounts need a user-verified passkey. */
  adminPhishingResistant?: boolean;
  /** Holds a privileged realm role (e.g. realm-admin). */
  privileged: boolean;
  /**
   * thirdParty: the client came from dynamic registration, so someone other than the realm's
   * owner operates it (the consent step says so).
   */
  client: { consentMode: string; requireMfa: boolean; thirdParty?: boolean };
  mfaRequirement: 'optional' | 'required';
  adminAudienceRequested: boolean;
  consentCovers: boolean;
  organization: OrganizationFacts;
  methods: LoginMethods;
  /** Purposes with a live code or link sent in this transaction. */
  sent: ChallengePurpose[];
  /** A password reset code was proved in this transaction: update_password follows. */
  resetProved: boolean;
  signup: {
    mode: RegistrationMode;
    /** registration.require_approval: a new account waits for an administrator. */
    requireApproval: boolean;
    allowGuests: boolean;
    /** login.identifiers lists username (a new account may choose one); undefined: yes. */
    usernames?: boolean;
    /** The account's registration waits for (or was refused by) an administrator. */
    approvalPending: boolean;
  };
  /** interaction.terms_version and whether the account accepted it. */
  terms: { version: string | null; accepted: boolean };
  /** Required profile fields (policy) and those the account has no value for. */
  profile: { required: string[]; missing: string[] };
  /** Upstream providers in play and what one said (undefined: none loaded, as in unit tables). */
  federation?: FederationFacts;
}

export type Evaluation =
  | { kind: 'actions'; actions: NextAction[] }
  | { kind: 'blocked'; reason: BlockingReason }
  | { kind: 'complete' };
