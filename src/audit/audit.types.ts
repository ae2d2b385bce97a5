// Audit vocabulary: event types and categories written so far. Extend these unions; never inline
// a type string at a call site.
import type { Actor, ActorType } from '../kernel/call.ts';

export { SYSTEM_ACTOR } from '../kernel/call.ts';
export type { Actor, ActorType };

export type AuditType =
  | 'realm.created'
  | 'realm.policy.updated'
  | 'signing_key.created'
  | 'signing_key.activated'
  | 'signing_key.retired'
  | 'signing_key.rotation.planned'
  | 'user.created'
  | 'client.created'
  | 'client.secret.issued'
  | 'client.secret.revoked'
  | 'bootstrap.administrator_created'
  | 'user.signed_in'
  | 'signin.transaction.started'
  | 'signin.transaction.cancelled'
  | 'signin.transaction.failed'
  | 'signin.proof_failed'
  | 'mfa.totp.enrolled'
  | 'mfa.recovery_code.used'
  | 'user.recovery_restricted'
  | 'user.reactivated'
  | 'user.password_changed'
  | 'user.required_actions.completed'
  | 'consent.granted'
  | 'user.updated'
  | 'user.password_set'
  | 'user.suspended'
  | 'user.locked'
  | 'user.deleted'
  | 'user.sessions_revoked'
  | 'user.password_compromised'
  | 'user.verified'
  | 'user.identifier_verified'
  | 'user.password_reset'
  | 'user.terms_accepted'
  | 'user.profile_completed'
  | 'user.deletion_requested'
  | 'user.deletion_cancelled'
  | 'user.registration_approved'
  | 'user.registration_denied'
  | 'notification.queued'
  | 'session.revoked'
  | 'client.updated'
  | 'client.state_changed'
  | 'service_principal.created'
  | 'service_principal.state_changed'
  | 'client.resource_grant.set'
  | 'resource.created'
  | 'resource.updated'
  | 'resource.introspector.added'
  | 'resource.introspector.removed'
  | 'client.resource_grant.removed'
  | 'token.code_replayed'
  | 'token.refresh_reuse_detected'
  | 'token.revoked'
  | 'token.exchanged'
  | 'user.logged_out'
  | 'user.read'
  | 'user.search'
  | 'organization.created'
  | 'organization.updated'
  | 'organization.suspended'
  | 'organization.reactivated'
  | 'organization.archived'
  | 'organization.deleted'
  | 'organization.deletion.completed'
  | 'organization.domain.added'
  | 'organization.domain.removed'
  | 'organization.membership.added'
  | 'organization.membership.suspended'
  | 'organization.membership.reactivated'
  | 'organization.membership.removed'
  | 'organization.membership.expired'
  | 'organization.invitation.created'
  | 'organization.invitation.resent'
  | 'organization.invitation.revoked'
  | 'organization.invitation.reassigned'
  | 'organization.invitation.accepted'
  | 'organization.invitation.declined'
  | 'organization.invitation.expired'
  | 'organization.join_request.created'
  | 'organization.join_request.approved'
  | 'organization.join_request.denied'
  | 'organization.join_request.withdrawn'
  | 'organization.join_request.expired'
  | 'organization.ownership.transferred'
  | 'permission.created'
  | 'permission.deleted'
  | 'role.created'
  | 'role.updated'
  | 'role.deleted'
  | 'role.assigned'
  | 'role.unassigned'
  | 'group.created'
  | 'group.updated'
  | 'group.deleted'
  | 'group.member.added'
  | 'group.member.removed'
  | 'project.created'
  | 'project.updated'
  | 'project.state_changed'
  | 'service_principal.updated'
  | 'authorization.type.written'
  | 'authorization.type.deleted'
  | 'authorization.tuples.written'
  | 'support.grant.created'
  | 'support.grant.denied'
  | 'support.grant.revoked'
  | 'support.grant.redeemed'
  | 'support.handoff.replayed'
  | 'support.access.preference_set'
  | 'job.result.downloaded';

export type AuditCategory =
  | 'configuration'
  | 'security'
  | 'identity'
  | 'operations'
  | 'emergency'
  | 'privacy'
  | 'data_access';

/** Signals that raise a security.alert event (spec doc 2, Events catalog). */
export type SecuritySignal =
  | 'bootstrap'
  | 'signing_key_change'
  | 'configuration_change'
  | 'credential_issued'
  | 'credential_compromised'
  | 'refresh_reuse'
  | 'emergency_action'
  | 'privileged_grant'
  | 'factor_recovery'
  | 'impersonation_denied'
  | 'impersonation_activity';

/** Someone running identity-cli against the database: known to be an operator, not which one. */
export const OPERATOR_ACTOR: Actor = { type: 'operator', id: null };

export interface AuditEntry {
  realmId: string | null;
  type: AuditType;
  category: AuditCategory;
  outcome?: 'success' | 'failure';
  actor: Actor;
  subject?: { type: string; id: string };
  target?: { type: string; id: string };
  orgId?: string;
  correlationId?: string;
  signal?: SecuritySignal;
  reason?: string;
  data?: Record<string, unknown>;
}
