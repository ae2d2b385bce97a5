// The sign-in transaction as the engine sees it (spec doc 1, "Sign-in transaction state").

export type TxStatus = 'pending' | 'completed' | 'cancelled' | 'expired' | 'failed';
export type TxMode = 'browser' | 'headless';
export type Intent = 'login' | 'register' | 'step_up' | 'invitation' | 'device';
export type ResponseMode = 'query' | 'query.jwt' | 'jwt';

/** Factor names as the state's completed_factors lists them. */
export type Factor =
  | 'pwd'
  | 'otp'
  | 'sms'
  | 'magic_link'
  | 'totp'
  | 'hotp'
  | 'recovery'
  | 'hwk'
  | 'swk'
  | 'x509'
  | 'fed'
  | 'fed_mfa'
  | 'anon';

export const SECOND_FACTORS: readonly Factor[] = ['totp', 'hotp', 'recovery', 'hwk', 'x509', 'fed_mfa'];
export const PRIMARY_FACTORS: readonly Factor[] = [
  'pwd',
  'otp',
  'sms',
  'magic_link',
  'hwk',
  'swk',
  'x509',
  'fed',
  'anon',
];

/**
 * Whether factor `f` of `t` is a second factor: a certificate only from a multi-factor trust
 * anchor (docs/certificate-signin.md); from any other anchor it is a primary factor alone.
 */
export const isSecondFactor = (t: Pick<SigninTx, 'certificateMultiFactor'>, f: Factor): boolean =>
  SECOND_FACTORS.includes(f) && (f !== 'x509' || t.certificateMultiFactor === true);

/** A user-verified passkey, or a certificate from a multi-factor trust anchor. */
export const phishingResistantProved = (t: Pick<SigninTx, 'completedFactors' | 'certificateMultiFactor'>) =>
  t.completedFactors.some((f) => f === 'hwk' || (f === 'x509' && t.certificateMultiFactor === true));

/** Reasons a pending transaction cannot go on (state.error while pending). */
export type BlockingReason =
  | 'account_unavailable'
  | 'organization_access_denied'
  | 'no_organization'
  | 'login_method_not_allowed'
  | 'registration_pending_approval'
  | 'guest_not_permitted'
  | 'authentication_policy_denied'
  | 'connection_not_allowed';

export type FailureCode = 'too_many_failures' | 'access_denied';

export interface SigninTx {
  realmId: string;
  id: string;
  mode: TxMode;
  status: TxStatus;
  intent: Intent;
  clientId: string;
  redirectUri: string;
  responseMode: ResponseMode;
  scopes: string[];
  resources: string[];
  state: string | null;
  nonce: string | null;
  codeChallenge: string;
  prompt: string[];
  maxAge: number | null;
  acrValues: string[];
  loginHint: string | null;
  uiLocales: string | null;
  userAgent: string | null;
  /** The start parameter `organization` as given (an organization id or slug). */
  organization: string | null;
  /** The organization chosen in the select_organization step, or the one completion signed in to. */
  organizationId: string | null;
  identifier: string | null;
  userId: string | null;
  completedFactors: Factor[];
  failures: number;
  error: BlockingReason | FailureCode | null;
  rememberMe: boolean;
  transient: boolean;
  consentScopes: string[] | null;
  pendingTotpSealed: string | null;
  /** The live SSO session this browser transaction started from; completion reuses it. */
  sessionId: string | null;
  /** prompt=select_account was answered. */
  accountConfirmed: boolean;
  /**
   * The x509 factor came from a multi-factor trust anchor (smart card or PIV token with a PIN):
   * it is a second factor too, and phishing-resistant. Absent: false.
   */
  certificateMultiFactor?: boolean;
  /** A registration for an address that has an account: the account it stands for (never created). */
  registrationDecoy: RegistrationDecoy | null;
  redirectTo: string | null;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/**
 * What a registration for a taken address shows in place of the new account (docs/registration.md):
 * the name typed, and where a new account would stop (email verification, else approval).
 */
export interface RegistrationDecoy {
  displayName: string | null;
  verifyEmail: boolean;
}

/** Failed proofs a transaction tolerates before it ends `failed` (the spec leaves the number open). */
export const FAILURE_BUDGET = 5;
