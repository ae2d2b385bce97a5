// Erasing an account (administrator delete, self-deletion, lifecycle expiry; spec doc 2, Catalog:
// user.deleted "account erased"): the one place that knows every table holding rows of an account
// and what erasure does to each. Rows other contexts own are named here by table, as data, rather
// than through an erase function per context: sign-in (tier 3) sits above users/, and a table a
// migration adds must be decided here, which test/integration/users/account-erasure.test.ts
// enforces by reading the schema (docs/architecture.md, knot decision 5).
//
// Every statement takes $1 = realm id, $2 = user id, $3 = now, and touches only that account's rows.
// The callers end the account's sessions, grants and tokens first (sessions/account-revocation.ts)
// in the same transaction.
import type { Tx } from '../platform/db/db.ts';

export type ErasureDisposition = 'erased' | 'anonymised' | 'kept';

export interface UserOwnedTable {
  table: string;
  /** The columns that can name the account (for `X_id` with `X_type`, when the type is user). */
  columns: readonly string[];
  disposition: ErasureDisposition;
  /** Why this disposition. */
  why: string;
  /** erased: which rows (after `realm_id = $1 and`); anonymised: the whole update statement. */
  sql?: string;
}

const erased = (table: string, why: string, column = 'user_id'): UserOwnedTable => ({
  table,
  columns: [column],
  disposition: 'erased',
  why,
  sql: `${column} = $2`,
});

/** An object the account owned stays, without an owner. */
const ownerCleared = (table: string, what: string): UserOwnedTable => ({
  table,
  columns: ['owner_user_id'],
  disposition: 'anonymised',
  why: `the ${what} stays; it loses its owner`,
  sql: `update ${table} set owner_user_id = null, updated_at = $3 where realm_id = $1 and owner_user_id = $2`,
});

const CREDENTIALS = 'a credential or secret of the account';

export const USER_OWNED_TABLES: readonly UserOwnedTable[] = [
  // ---- erased ----------------------------------------------------------------------------------
  erased('user_identifiers', 'the addresses and names the account signs in with'),
  erased('password_credentials', CREDENTIALS),
  erased('password_history', CREDENTIALS),
  erased('totp_credentials', CREDENTIALS),
  erased('hotp_credentials', CREDENTIALS),
  erased('recovery_codes', CREDENTIALS),
  erased('webauthn_credentials', CREDENTIALS),
  erased('webauthn_ceremonies', 'a passkey ceremony in progress'),
  erased('factor_enrollments', 'a pending factor enrollment and its sealed secret'),
  erased('remembered_devices', 'devices that skip a second factor, with their user agents'),
  erased('consents', "the account's consent to clients; the audit trail keeps consent.granted"),
  erased('support_access_preferences', "the account's choice about support access"),
  erased('terms_acceptances', 'accepted terms; the audit trail keeps user.terms_accepted'),
  erased('registration_approvals', 'a registration held for approval: nothing is left to approve'),
  erased('signin_challenges', 'codes and links in flight and the address they were sent to'),
  erased('signin_transactions', 'sign-ins in progress with their identifier, hints and user agent'),
  erased('authorization_codes', 'codes of the account, unusable once it is deleted'),
  erased('device_authorizations', 'devices the account approved or refused, with their sessions'),
  erased('membership_requests', 'invitations and join requests of the account, with their messages'),
  erased('upstream_tokens', 'tokens an upstream provider issued to the account (sealed)'),
  erased('linked_identities', 'upstream identities that sign in to the account, with their addresses'),
  erased('saml_subjects', 'the persistent NameIDs SAML service providers knew the account by'),
  erased(
    'saml_session_participants',
    'which SAML service providers its sessions signed in to, by which NameID',
  ),
  erased(
    'scim_users',
    'the directory attributes a SCIM connector provisioned (name parts, emails, enterprise data)',
  ),
  {
    table: 'role_assignments',
    columns: ['subject_id'],
    disposition: 'erased',
    why: "the account's roles: a deleted account holds none",
    sql: `subject_type = 'user' and subject_id = $2`,
  },
  {
    table: 'group_members',
    columns: ['subject_id'],
    disposition: 'erased',
    why: "the account's group memberships",
    sql: `subject_type = 'user' and subject_id = $2`,
  },

  // ---- anonymised --------------------------------------------------------------------------------
  {
    table: 'memberships',
    columns: ['user_id'],
    disposition: 'anonymised',
    why: 'ended (removed, user_deleted) and stripped of metadata; the row keeps the organization history and its revision',
    sql: `update memberships
             set state = case when state in ('removed', 'expired') then state else 'removed' end,
                 ended_reason = coalesce(ended_reason, 'user_deleted'), metadata = '{}', external_id = null,
                 updated_at = $3
           where realm_id = $1 and user_id = $2`,
  },
  {
    table: 'sessions',
    columns: ['user_id'],
    disposition: 'anonymised',
    why: 'revoked by the account revocation; the user agent goes, the row stays until tokens.cleanup',
    sql: 'update sessions set user_agent = null where realm_id = $1 and user_id = $2',
  },
  {
    table: 'user_external_ids',
    columns: ['user_id'],
    disposition: 'anonymised',
    why: 'the source id goes, its digest stays, so importing the same record again answers skipped_deleted',
    sql: `update user_external_ids set source_id = null, erased_at = $3 where realm_id = $1 and user_id = $2`,
  },
  {
    table: 'assisted_recoveries',
    columns: ['user_id', 'requested_by_id', 'approved_by_id', 'cancelled_by_id'],
    disposition: 'anonymised',
    why: 'kept without cleanup (doc 2, Data lifecycle 4); an open request of the account ends cancelled (doc 1, state table: account deletion), and its reason, evidence reference and setup link go; rows naming the account as operator keep the id as evidence',
    sql: `update assisted_recoveries
             set status = case when status in ('scheduled', 'approved') then 'cancelled' else status end,
                 cancel_reason = case when status in ('scheduled', 'approved') then 'account_unavailable' else cancel_reason end,
                 cancelled_at = case when status in ('scheduled', 'approved') then $3 else cancelled_at end,
                 reason = null, evidence_reference = null, setup_token_digest = null, updated_at = $3
           where realm_id = $1 and user_id = $2`,
  },
  ownerCleared('projects', 'project'),
  ownerCleared('service_principals', 'principal'),
  ownerCleared('webhook_subscriptions', 'subscription'),
  ownerCleared('hooks', 'hook'),
  ownerCleared('identity_providers', 'identity provider connection'),
  {
    table: 'users',
    columns: ['id'],
    disposition: 'anonymised',
    why: 'a tombstone: state deleted, the id kept so tokens, audit records and events still resolve, the profile gone',
    sql: `update users set state = 'deleted', display_name = null, required_actions = '{}', attributes = '{}',
                 admin_metadata = '{}', deletion_due_at = null, deactivate_at = null,
                 deactivation_reason = null, dormant_flagged_at = null, updated_at = $3, profile_updated_at = $3
           where realm_id = $1 and id = $2`,
  },

  // ---- kept --------------------------------------------------------------------------------------
  {
    table: 'user_revocations',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'it is what keeps every token issued before the erasure inactive (doc 2, Revocation exposure)',
  },
  {
    table: 'access_reviews',
    columns: ['created_by_id', 'scope_id'],
    disposition: 'kept',
    why: 'who started an access review (an id, as the audit trail keeps it); a scope is a role or an organization, never an account',
  },
  {
    table: 'access_review_items',
    columns: ['user_id', 'decided_by'],
    disposition: 'kept',
    why: 'the evidence of an access review: ids and decisions only, the audit trail of who kept what',
  },
  {
    table: 'provisioning_links',
    columns: ['local_id'],
    disposition: 'kept',
    why: "a pair of ids (ours and the SCIM target's), no personal data; it is what lets provisioning.push delete the copy at the target, which then removes the link (docs/provisioning.md)",
  },
  {
    table: 'workflows',
    columns: ['run_as_id'],
    disposition: 'kept',
    why: "whose authority a lifecycle workflow's steps use (an id, as the audit trail keeps it); without a live account the steps are refused",
  },
  {
    table: 'plugins',
    columns: ['installed_by_id'],
    disposition: 'kept',
    why: 'who installed the plugin version in use (an id, as the audit trail keeps it); plugins are kept without clean-up (docs/plugins.md)',
  },
  {
    table: 'plugin_versions',
    columns: ['uploaded_by_id', 'approved_by_id'],
    disposition: 'kept',
    why: 'who uploaded and who approved a plugin version: ids only, the evidence of its review, kept as the audit trail is',
  },
  {
    table: 'workflow_runs',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'the history of lifecycle workflow runs: ids and step outcomes only, like the audit records they match',
  },
  {
    table: 'oauth_grants',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'revoked in the same transaction; holds ids and scopes only; tokens.cleanup removes it',
  },
  {
    table: 'refresh_families',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'revoked in the same transaction, so a stolen refresh token stays refused; tokens.cleanup removes it',
  },
  {
    table: 'opaque_access_tokens',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'revoked in the same transaction (digests only); tokens.cleanup removes them after expiry',
  },
  {
    table: 'support_grants',
    columns: ['actor_user_id', 'target_user_id', 'revoked_by_id'],
    disposition: 'kept',
    why: 'evidence of support access to accounts, kept as audit evidence is; ended by the account revocation',
  },
  {
    table: 'audit_events',
    columns: ['actor_id', 'subject_id', 'target_id'],
    disposition: 'kept',
    why: 'audit evidence, removed only by its retention (doc 2, Data lifecycle and retention)',
  },
  {
    table: 'imported_audit_events',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'imported audit history, removed only by its own retention as audit evidence is (doc 2, Data lifecycle 1)',
  },
  {
    table: 'audit_legal_holds',
    columns: ['subject_id'],
    disposition: 'kept',
    why: "a legal hold on the account's evidence outlives the account",
  },
  {
    table: 'authz_tuples',
    columns: ['subject_id', 'object_id'],
    disposition: 'kept',
    why: "application relationship data under the application's own subject ids; it learns of the erasure from user.deleted",
  },
  {
    table: 'emergency_controls',
    columns: ['created_by_id'],
    disposition: 'kept',
    why: 'who placed an emergency control: evidence, as the audit record of it is',
  },
  {
    table: 'account_merges',
    columns: ['target_user_id', 'source_user_id', 'actor_id'],
    disposition: 'kept',
    why: 'merge records are kept without cleanup (doc 2, Data lifecycle 4); ids only',
  },
  {
    table: 'federation_transfers',
    columns: ['created_by_id', 'approved_by_id'],
    disposition: 'kept',
    why: 'who asked for and who approved a federation transfer: evidence of the two-person review; ids only',
  },
  {
    table: 'jobs',
    columns: ['requested_by_id'],
    disposition: 'kept',
    why: 'the record of who asked; the runner re-checks the requester, so a deleted one fails the job',
  },
  {
    table: 'session_clients',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'which clients took part in a session (ids only); removed with the session by tokens.cleanup',
  },
  {
    table: 'backchannel_logout_deliveries',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'the logout tokens the erasure itself queued must still reach the clients; ids only, deleted after privacy.history_retention',
  },
  {
    table: 'ssf_events',
    columns: ['user_id'],
    disposition: 'kept',
    why: 'security events the erasure itself emitted must still reach the receivers; ids only, expired after 7 days and deleted 14 days after finishing',
  },
  {
    table: 'job_download_tokens',
    columns: ['requester_id'],
    disposition: 'kept',
    why: 'digests that expire within minutes and check the requester when redeemed',
  },
];

/**
 * Erases an account in the caller's transaction: every table above is handled as it says, the
 * account's own row last. The caller has ended its sessions, grants and tokens first.
 */
export async function eraseAccount(tx: Tx, realmId: string, userId: string, now: Date): Promise<void> {
  for (const t of USER_OWNED_TABLES) {
    if (t.disposition === 'erased') {
      await tx.query(`delete from ${t.table} where realm_id = $1 and ${t.sql}`, [realmId, userId]);
    }
  }
  // Updates take now; the users row is listed last so the tombstone is written after the rest.
  for (const t of USER_OWNED_TABLES) {
    if (t.disposition !== 'anonymised' || !t.sql) continue;
    await tx.query(t.sql, t.sql.includes('$3') ? [realmId, userId, now] : [realmId, userId]);
  }
}
