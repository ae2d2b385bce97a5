// The event catalog (spec doc 2, Events: Catalog; docs/events.md): every type the outbox carries,
// the data members each one has, and, as one typed table, when its envelope names an organization,
// which members only the standard payload form sends, and which operation emits it.
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
  'user.merged': { user_id: string; merged_user_id: string };
  'user.password_reset': { user_id: string };
  'security.refresh_reuse_detected': { subject_id: string; family_id: string };
  'security.credential_compromised': { user_id: string };
  'organization.created': { organization_id: string; slug: string };
  'organization.suspended': { organization_id: string; state: string };
  'organization.reactivated': { organization_id: string; state: string };
  'organization.archived': { organization_id: string; state: string };
  'organization.deleted': { organization_id: string };
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

/** When the envelope's org_id is set. */
export type EnvelopeOrg =
  | 'never'
  | 'always'
  | 'if_organization_selected'
  | 'if_grant_organization_bound'
  | 'if_organization_scoped'
  | 'when_the_audit_event_has_one';

export interface CatalogEntry<T extends EventType> {
  orgId: EnvelopeOrg;
  /** Every data member, in the catalog's order. */
  data: readonly (keyof EventData[T] & string)[];
  /** Members the minimal payload form leaves out whatever their name (the catalog's dagger). */
  standardOnly: readonly (keyof EventData[T] & string)[];
  /** The operations that emit it (docs/events.md). */
  emittedBy: string;
}

/** The catalog as one table; `satisfies` makes a type missing here, or a member misspelt, a compile error. */
export const EVENT_CATALOG: { readonly [T in EventType]: CatalogEntry<T> } = {
  'user.created': {
    orgId: 'never',
    data: ['user_id', 'created_via'],
    standardOnly: ['created_via'],
    emittedBy:
      'POST /users; identity-cli bootstrap; self-service registration (invitation sign-up, federation and import are not built yet)',
  },
  'user.signed_in': {
    orgId: 'if_organization_selected',
    data: ['user_id', 'session_id', 'client_id'],
    standardOnly: [],
    emittedBy: 'sign-in completed and a grant issued (authorization code or headless exchange)',
  },
  'user.suspended': {
    orgId: 'never',
    data: ['user_id', 'state'],
    standardOnly: [],
    emittedBy:
      'POST /users/{user}/suspend; POST /registrations/{user}/deny; worker task lifecycle.users (scheduled deactivation, dormant accounts under `dormant_action: suspend`)',
  },
  'user.locked': {
    orgId: 'never',
    data: ['user_id', 'state'],
    standardOnly: [],
    emittedBy: 'POST /users/{user}/lock',
  },
  'user.reactivated': {
    orgId: 'never',
    data: ['user_id', 'state', 'reason'],
    standardOnly: [],
    emittedBy: 'POST /users/{user}/reactivate; a second-factor sign-in ending recovery restriction',
  },
  'user.recovery_restricted': {
    orgId: 'never',
    data: ['user_id', 'state', 'reason'],
    standardOnly: [],
    emittedBy: 'sign-in with a recovery code',
  },
  'user.deleted': {
    orgId: 'never',
    data: ['user_id'],
    standardOnly: [],
    emittedBy:
      'DELETE /users/{user}; worker tasks users.deletion (self-service deletion after its grace) and lifecycle.users (expired unverified registrations and guests)',
  },
  'user.merged': {
    orgId: 'never',
    data: ['user_id', 'merged_user_id'],
    standardOnly: [],
    emittedBy: 'POST /users/{user}/merges (identity-providers/account-merge.ts)',
  },
  'user.password_reset': {
    orgId: 'never',
    data: ['user_id'],
    standardOnly: [],
    emittedBy: 'self-service password reset completed (update_password after password/reset)',
  },
  'session.revoked': {
    orgId: 'never',
    data: ['user_id', 'session_id', 'reason'],
    standardOnly: [],
    emittedBy:
      'DELETE /me/sessions/{id}, POST /me/sessions/revoke-all and POST /users/{user}/revoke-sessions (account-wide revocation), a password change that ends sessions; never a logout',
  },
  'security.refresh_reuse_detected': {
    orgId: 'if_grant_organization_bound',
    data: ['subject_id', 'family_id'],
    standardOnly: [],
    emittedBy: 'token endpoint: a rotated refresh token presented again',
  },
  'security.credential_compromised': {
    orgId: 'never',
    data: ['user_id'],
    standardOnly: [],
    emittedBy: 'POST /users/{user}/credentials/password/compromised',
  },
  'security.alert': {
    orgId: 'when_the_audit_event_has_one',
    data: ['signal', 'audit_event_id', 'event_type', 'actor_type', 'actor_id', 'subject_type', 'subject_id'],
    standardOnly: [],
    emittedBy: 'every audit record carrying an alertable signal (audit/audit.repo.ts)',
  },
  'organization.created': {
    orgId: 'always',
    data: ['organization_id', 'slug'],
    standardOnly: ['slug'],
    emittedBy: 'POST /organizations',
  },
  'organization.suspended': {
    orgId: 'always',
    data: ['organization_id', 'state'],
    standardOnly: [],
    emittedBy: 'POST /organizations/{org}/suspend',
  },
  'organization.reactivated': {
    orgId: 'always',
    data: ['organization_id', 'state'],
    standardOnly: [],
    emittedBy: 'POST /organizations/{org}/reactivate',
  },
  'organization.archived': {
    orgId: 'always',
    data: ['organization_id', 'state'],
    standardOnly: [],
    emittedBy: 'POST /organizations/{org}/archive',
  },
  'organization.deleted': {
    orgId: 'always',
    data: ['organization_id'],
    standardOnly: [],
    emittedBy: 'DELETE /organizations/{org} (deletion started)',
  },
  'organization.membership.added': {
    orgId: 'always',
    data: ['user_id', 'membership_id', 'source'],
    standardOnly: ['source'],
    emittedBy:
      'POST /organizations/{org}/members, POST /organizations (the creator as owner), invitation accepted',
  },
  'organization.membership.removed': {
    orgId: 'always',
    data: ['user_id', 'membership_id', 'authorization_revision'],
    standardOnly: [],
    emittedBy: 'DELETE /organizations/{org}/members/{membership}',
  },
  'organization.membership.suspended': {
    orgId: 'always',
    data: ['user_id', 'membership_id', 'authorization_revision'],
    standardOnly: [],
    emittedBy: 'POST /organizations/{org}/members/{membership}/suspend',
  },
  'organization.membership.reactivated': {
    orgId: 'always',
    data: ['user_id', 'membership_id', 'authorization_revision'],
    standardOnly: [],
    emittedBy: 'POST /organizations/{org}/members/{membership}/reactivate',
  },
  'organization.invitation.created': {
    orgId: 'always',
    data: ['invitation_id'],
    standardOnly: [],
    emittedBy: 'POST /organizations/{org}/invitations',
  },
  'organization.join_request.created': {
    orgId: 'always',
    data: ['join_request_id'],
    standardOnly: [],
    emittedBy: 'POST /me/join-requests',
  },
  'authorization.role.assigned': {
    orgId: 'if_organization_scoped',
    data: ['subject_id', 'role_id', 'assignment_id'],
    standardOnly: [],
    emittedBy: 'POST /role-assignments, organization role assignment',
  },
  'authorization.role.unassigned': {
    orgId: 'if_organization_scoped',
    data: ['subject_id', 'role_id'],
    standardOnly: [],
    emittedBy: 'DELETE /role-assignments/{id}, organization role removal',
  },
  'client.state_changed': {
    orgId: 'never',
    data: ['client_ref', 'state'],
    standardOnly: [],
    emittedBy: 'POST /clients/{client}/disable and /enable (suspended, reactivated)',
  },
  'service_principal.state_changed': {
    orgId: 'never',
    data: ['service_principal_id', 'state'],
    standardOnly: [],
    emittedBy: 'service principal disabled, re-enabled or deleted (also by organization suspension)',
  },
  'signing_key.rotated': {
    orgId: 'never',
    data: ['mode', 'new_kid', 'previous_kid', 'previous_key_compromised'],
    standardOnly: [],
    emittedBy:
      'POST /signing-key-rotations (planned or emergency), and keys.lifecycle starting a planned rotation',
  },
  'support.impersonation.started': {
    orgId: 'always',
    data: ['grant_id', 'actor_user_id', 'target_user_id', 'expires_at'],
    standardOnly: ['expires_at'],
    emittedBy: 'a support grant issued',
  },
  'support.impersonation.ended': {
    orgId: 'always',
    data: ['grant_id', 'reason'],
    standardOnly: [],
    emittedBy: 'a support grant revoked by the actor, the customer or an administrator',
  },
};

/** Every catalog type, in the table's order. */
export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

export const isEventType = (name: string): name is EventType => Object.hasOwn(EVENT_CATALOG, name);

/**
 * Catalog types no operation of this release emits, and why (docs/events.md). The catalog keeps
 * them so subscriptions can name them; the completeness test exempts exactly these.
 */
export const NOT_EMITTED_YET: Readonly<Partial<Record<EventType, string>>> = {};
