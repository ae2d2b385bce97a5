// The outstanding one-time proofs a reconciliation ends (document 2, "Backup and restore" 3): any
// of them issued between the backup and the failure is gone from the restored database, but one
// the backup still holds may have been used after it. This is the one list: a feature that adds a
// proof adds its statement here (a null statement says the proof does not exist in this version).
import type { Tx } from '../platform/db/db.ts';

const PROOFS: readonly { name: string; sql: string | null }[] = [
  {
    name: 'signin_challenges',
    sql: 'update signin_challenges set expires_at = $1 where consumed_at is null and expires_at > $1',
  },
  {
    name: 'authorization_codes',
    sql: 'update authorization_codes set expires_at = $1 where consumed_at is null and expires_at > $1',
  },
  {
    name: 'pushed_authorization_requests',
    sql: 'update pushed_authorization_requests set expires_at = $1 where expires_at > $1',
  },
  {
    name: 'device_codes',
    sql: `update device_authorizations set expires_at = $1 where status in ('pending', 'approved') and expires_at > $1`,
  },
  {
    name: 'signin_transactions',
    sql: `update signin_transactions set status = 'expired', expires_at = least(expires_at, $1) where status = 'pending'`,
  },
  { name: 'passkey_ceremonies', sql: 'update webauthn_ceremonies set expires_at = $1 where expires_at > $1' },
  {
    name: 'federation_requests',
    sql: `update federation_requests set expires_at = $1
            where saml_request_id is null and consumed_at is null and expires_at > $1`,
  },
  {
    name: 'saml_request_states',
    sql: `update federation_requests set expires_at = $1
            where saml_request_id is not null and consumed_at is null and expires_at > $1`,
  },
  {
    name: 'support_handoff_codes',
    sql: 'update support_grants set handoff_expires_at = $1 where handoff_used_at is null and handoff_expires_at > $1',
  },
  {
    name: 'job_download_tokens',
    sql: 'update job_download_tokens set expires_at = $1 where used_at is null and expires_at > $1',
  },
  {
    // The SAML identity provider's request states (migrations/0052); an answered one is consumed.
    name: 'saml_idp_request_states',
    sql: 'update saml_idp_requests set expires_at = $1 where consumed_at is null and expires_at > $1',
  },
];

/** Ends them all; per proof, how many ended, or not_applicable. */
export async function endOneTimeProofs(
  tx: Tx,
  now: Date,
): Promise<Record<string, number | 'not_applicable'>> {
  const ended: Record<string, number | 'not_applicable'> = {};
  for (const p of PROOFS)
    ended[p.name] = p.sql === null ? 'not_applicable' : (await tx.query(p.sql, [now])).rowCount;
  return ended;
}
