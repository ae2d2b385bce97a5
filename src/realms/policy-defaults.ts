// The policy a new realm starts with (spec doc 1, "Defaults of a new realm"); stored as revision 1.
export function defaultRealmPolicy(): Record<string, unknown> {
  return {
    registration: { mode: 'closed', require_email_verification: true },
    login: { identifiers: ['email', 'username'], password: true },
    mfa: { requirement: 'optional', allowed_factors: ['totp', 'webauthn', 'recovery_code'] },
    impersonation: { approval: 'none', notify_customer: true, allow_customer_opt_out: true },
    password: { revoke_sessions_on_change: true },
    webauthn: { allow_synced: true, user_verification: 'preferred' },
    lifecycle: { unverified_account_ttl_hours: 72 },
  };
}
