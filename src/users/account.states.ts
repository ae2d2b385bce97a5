// The one answer to "may an account in this state ..." (document 1, Account states), used by
// sign-in, the live-access checks behind tokens, and the decision API. The administrator moves
// between states are in users.admin.ts; the sign-in moves (recovery code, restored assurance) in
// signin/steps/account-effects.ts; the lifecycle rules (users/lifecycle.rules.ts) suspend active
// accounts that are dormant or past a scheduled deactivation, and erase expired unverified
// registrations and guests.
//
//   active <--recovery code / strong factor--> recovery_restricted
//   active | pending_verification | recovery_restricted | pending_deletion --suspend, lock--> suspended | locked
//   suspended | locked | recovery_restricted | pending_deletion --reactivate--> active
//   active --dormant rule (suspend), scheduled deactivation--> suspended
//   pending_verification | active guest --lifecycle expiry--> deleted
//   any --delete--> deleted (not found afterwards)

export const ACCOUNT_STATES = [
  'active',
  'pending_verification',
  'suspended',
  'locked',
  'recovery_restricted',
  'pending_deletion',
  'deleted',
] as const;

export type AccountState = (typeof ACCOUNT_STATES)[number];

// A recovery-restricted account is an active account whose sessions are limited at the edge
// (docs/architecture.md), so it signs in, holds tokens and holds its roles. An account waiting
// for verification holds the tokens it was given but cannot sign in or act through roles.
const SIGN_IN: ReadonlySet<string> = new Set<AccountState>(['active', 'recovery_restricted']);
const TOKENS: ReadonlySet<string> = new Set<AccountState>([
  'active',
  'recovery_restricted',
  'pending_verification',
]);
const ROLES: ReadonlySet<string> = new Set<AccountState>(['active', 'recovery_restricted']);

/** May finish a sign-in (which state blocked it is never revealed). */
export const maySignIn = (state: string | null | undefined): boolean => SIGN_IN.has(state ?? '');

/** May hold live tokens: every other state makes them inactive at once. */
export const mayHoldTokens = (state: string | null | undefined): boolean => TOKENS.has(state ?? '');

/** Its role holdings count for permissions and decisions. */
export const mayHoldRoles = (state: string | null | undefined): boolean => ROLES.has(state ?? '');

export type StateChange = 'suspend' | 'lock' | 'reactivate';

// Not suspended, locked or deleted: an administrator may still suspend or lock it.
const OPEN: readonly AccountState[] = [
  'active',
  'pending_verification',
  'recovery_restricted',
  'pending_deletion',
];

/** The administrator's moves (document 1, Account states); any other move is a conflict. */
export const ADMIN_STATE_CHANGES: Record<StateChange, { from: readonly AccountState[]; to: AccountState }> = {
  suspend: { from: [...OPEN, 'locked'], to: 'suspended' },
  lock: { from: [...OPEN, 'suspended'], to: 'locked' },
  reactivate: { from: ['suspended', 'locked', 'recovery_restricted', 'pending_deletion'], to: 'active' },
};
