// Event types emitted to the outbox, with the data members each carries (spec doc 2, Catalog).
// Data holds identifiers, states, reasons and timestamps only: never secrets, emails or names.

export interface EventData {
  'user.created': { user_id: string; created_via: string };
  'user.signed_in': { user_id: string; session_id: string; client_id: string };
  'session.revoked': { user_id: string; session_id: string; reason: string };
  'user.recovery_restricted': { user_id: string; state: string; reason: string };
  'user.reactivated': { user_id: string; state: string; reason: string };
  'user.suspended': { user_id: string; state: string };
  'user.locked': { user_id: string; state: string };
  'user.deleted': { user_id: string };
  'user.password_reset': { user_id: string };
  'security.refresh_reuse_detected': { subject_id: string; family_id: string };
  'security.credential_compromised': { user_id: string };
  'organization.created': { organization_id: string; slug: string };
  'organization.suspended': { organization_id: string; state: string };
  'organization.reactivated': { organization_id: string; state: string };
  'organization.archived': { organization_id: string; state: string };
  'organization.deleted': { organization_id: string };
  'organization.deletion.completed': { organization_id: string };
  'organization.membership.added': { user_id: string; membership_id: string; source: string };
  'organization.membership.removed': {
    user_id: string;
    membership_id: string;
    authorization_revision: number;
  };
  'organization.membership.suspended': {
    user_id: string;
    membership_id: string;
    authorization_revision: number;
  };
  'organization.membership.reactivated': {
    user_id: string;
    membership_id: string;
    authorization_revision: number;
  };
  'organization.invitation.created': { invitation_id: string };
  'organization.join_request.created': { join_request_id: string };
  'authorization.role.assigned': { subject_id: string; role_id: string; assignment_id: string };
  'authorization.role.unassigned': { subject_id: string; role_id: string };
  'client.state_changed': { client_ref: string; state: string };
  'service_principal.state_changed': { service_principal_id: string; state: string };
  'security.alert': {
    signal: string;
    audit_event_id: string;
    event_type: string;
    actor_type: string;
    actor_id: string | null;
    subject_type?: string;
    subject_id?: string;
  };
  'support.impersonation.started': {
    grant_id: string;
    actor_user_id: string;
    target_user_id: string;
    expires_at: string;
  };
  'support.impersonation.ended': { grant_id: string; reason: string };
  'signing_key.rotated': {
    mode: 'planned' | 'emergency';
    new_kid: string;
    previous_kid: string | null;
    previous_key_compromised: boolean;
  };
}

export type EventType = keyof EventData;
