// The catalog's names at run time, for checking what a webhook subscription asks for (spec doc 2,
// Webhook subscription: unknown names are rejected). Typed as a record over EventType, so a type
// added to the catalog and not listed here fails to compile.
import type { EventType } from './catalog.ts';

const NAMES: Record<EventType, true> = {
  'user.created': true,
  'user.signed_in': true,
  'session.revoked': true,
  'user.recovery_restricted': true,
  'user.reactivated': true,
  'user.suspended': true,
  'user.locked': true,
  'user.deleted': true,
  'security.refresh_reuse_detected': true,
  'security.credential_compromised': true,
  'organization.created': true,
  'organization.suspended': true,
  'organization.reactivated': true,
  'organization.archived': true,
  'organization.deleted': true,
  'organization.deletion.completed': true,
  'organization.membership.added': true,
  'organization.membership.removed': true,
  'organization.membership.suspended': true,
  'organization.membership.reactivated': true,
  'organization.invitation.created': true,
  'organization.join_request.created': true,
  'authorization.role.assigned': true,
  'authorization.role.unassigned': true,
  'client.state_changed': true,
  'service_principal.state_changed': true,
  'security.alert': true,
  'support.impersonation.started': true,
  'support.impersonation.ended': true,
  'signing_key.rotated': true,
};

export const EVENT_TYPES: readonly EventType[] = Object.keys(NAMES) as EventType[];

export const isEventType = (name: string): name is EventType => Object.hasOwn(NAMES, name);
