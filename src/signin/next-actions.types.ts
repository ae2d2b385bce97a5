// The vocabulary of next-action evaluation (document 1, evaluation order of actions): what an
// action offers, the facts loaded for a transaction, and what evaluating them gives.
import type { FlowFacts } from './flow-facts.ts';
import type { OrganizationFacts } from './organization-facts.ts';
import type { BlockingReason } from './transaction.ts';

export type ActionType =
  | 'select_account'
  | 'identify'
  | 'password'
  | 'totp'
  | 'hotp'
  | 'recovery_code'
  | 'enroll_totp'
  | 'update_password'
  | 'select_organization'
  | 'consent'
  | 'remember_device'
  | 'challenge';

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
}

export interface Facts {
  user: UserFacts | null;
  hasTotp: boolean;
  /** An HOTP token that counts: enrolled and mfa.allowed_factors lists hotp. */
  hasHotp?: boolean;
  /** The authentication-flow rule that matched (undefined: the realm has none, or no account yet). */
  flow?: FlowFacts;
  /** A live remembered device of the account was presented in this transaction. */
  rememberedDevice?: boolean;
  /** login.remember_devices is on and the user has not answered remember_device yet. */
  offerRememberDevice?: boolean;
  hasRecoveryCodes: boolean;
  /** Holds a privileged realm role (e.g. realm-admin). */
  privileged: boolean;
  client: { consentMode: string; requireMfa: boolean };
  mfaRequirement: 'optional' | 'required';
  adminAudienceRequested: boolean;
  consentCovers: boolean;
  organization: OrganizationFacts;
}

export type Evaluation =
  | { kind: 'actions'; actions: NextAction[] }
  | { kind: 'blocked'; reason: BlockingReason }
  | { kind: 'complete' };
