// The policy a new realm starts with (spec doc 1, "Defaults of a new realm"); stored as revision 1.
export function defaultRealmPolicy(): Record<string, unknown> {
  // Sections and members in alphabetical order; the values are the spec's.
  return {
    impersonation: { allow_customer_opt_out: true, approval: 'none', notify_customer: true },
    lifecycle: { unverified_account_ttl_hours: 72 },
    login: { password: true, identifiers: ['email', 'username'] },
    mfa: { allowed_factors: ['totp', 'webauthn', 'recovery_code'], requirement: 'optional' },
    password: { revoke_sessions_on_change: true },
    registration: { require_email_verification: true, mode: 'closed' },
    webauthn: { user_verification: 'preferred', allow_synced: true },
  };
}
