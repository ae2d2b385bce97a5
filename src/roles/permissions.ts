// Permission names of the administration API (spec doc 1, Authentication 5; doc 2 endpoint tables)
// and the built-in roles that hold them. Built-in role permissions live in code, not rows, so a
// permission added by a later release reaches existing realms without a data migration.

export const REALM_PERMISSIONS = [
  'realm.configuration.import',
  'realm.configuration.export',
  'realm.settings.read',
  'realm.settings.write',
  'realm.clients.write',
  'realm.resources.write',
  'realm.roles.read',
  'realm.roles.write',
  'realm.authorization.check',
  'realm.session_events.read',
  'realm.users.read',
  'realm.users.write',
  'realm.users.suspend',
  'realm.users.credentials.manage',
  'realm.users.verification.override',
  'realm.users.import',
  'realm.identity_providers.read',
  'realm.identity_providers.write',
  'realm.organizations.read',
  'realm.organizations.create',
  'realm.jobs.read',
  'realm.keys.rotate',
  'realm.emergency',
  'realm.webhooks.read',
  'realm.webhooks.write',
  'realm.hooks.read',
  'realm.hooks.write',
  'realm.audit.export',
  'realm.audit.legal_hold',
  'realm.audit.correct',
  'realm.data.export',
  'realm.groups.read',
  'realm.groups.write',
  'realm.projects.read',
  'realm.projects.write',
  'realm.service_principals.read',
  'realm.service_principals.write',
  'realm.relationships.read',
  'realm.relationships.write',
  'realm.access_reviews.manage',
  'realm.workflows.read',
  'realm.workflows.write',
  'realm.plugins.read',
  'realm.plugins.write',
  'realm.plugins.review',
] as const;

/**
 * Permissions inside one organization. Held through a realm-scope assignment they apply to every
 * organization of the realm; through an organization-scope assignment, to that organization only
 * (and only while the holder's membership and the organization are active).
 */
export const ORGANIZATION_PERMISSIONS = [
  'org.read',
  'org.update',
  'org.suspend',
  'org.delete',
  'org.domains.write',
  'org.members.read',
  'org.members.write',
  'org.members.invite',
  'org.roles.read',
  'org.roles.write',
  'org.roles.assign',
  'org.groups.read',
  'org.groups.write',
  'org.projects.read',
  'org.projects.write',
  'org.identity_providers.read',
  'org.identity_providers.write',
  'org.ownership.transfer',
] as const;

export const SUPPORT_PERMISSIONS = ['support.recovery.assist', 'support.impersonate'] as const;

/** Prefixes of names the service defines; applications cannot register names under them. */
export const BUILTIN_PERMISSION_PREFIXES = ['realm.', 'org.', 'support.', 'platform.'] as const;

export const isBuiltinPermissionName = (name: string): boolean =>
  BUILTIN_PERMISSION_PREFIXES.some((p) => name.toLowerCase().startsWith(p));

const BUILTIN_PERMISSION_SET = new Set<string>([
  ...REALM_PERMISSIONS,
  ...ORGANIZATION_PERMISSIONS,
  ...SUPPORT_PERMISSIONS,
]);

/** A built-in permission the service knows (names under the prefixes that it does not define are unknown). */
export const isKnownBuiltinPermission = (name: string): boolean => BUILTIN_PERMISSION_SET.has(name);

export type RoleScope = 'realm' | 'organization' | 'project';

export interface BuiltinRole {
  name: string;
  description: string;
  /** Where it may be assigned. */
  scope: RoleScope;
  permissions: readonly string[];
  /** Holding it makes MFA mandatory at sign-in (spec doc 1, MFA conditions). */
  privileged: boolean;
}

export const BUILTIN_ROLES = {
  realmAdmin: {
    name: 'realm-admin',
    description: 'Administers the realm: holds every realm permission, in every organization',
    scope: 'realm',
    permissions: [...REALM_PERMISSIONS, ...ORGANIZATION_PERMISSIONS, ...SUPPORT_PERMISSIONS],
    privileged: true,
  },
  resourceServer: {
    name: 'resource-server',
    description:
      'Asks for authorization decisions about tokens it receives and reads the session-event stream',
    scope: 'realm',
    permissions: ['realm.authorization.check', 'realm.session_events.read'],
    privileged: false,
  },
  orgOwner: {
    name: 'owner',
    description: 'Owns an organization: every organization permission',
    scope: 'organization',
    permissions: ORGANIZATION_PERMISSIONS,
    privileged: false,
  },
  orgAdmin: {
    name: 'admin',
    description: 'Administers an organization, short of deleting it or transferring ownership',
    scope: 'organization',
    permissions: ORGANIZATION_PERMISSIONS.filter((p) => p !== 'org.delete' && p !== 'org.ownership.transfer'),
    privileged: false,
  },
  orgMember: {
    name: 'member',
    description: 'Belongs to an organization: reads it, its members, groups and projects',
    scope: 'organization',
    permissions: ['org.read', 'org.members.read', 'org.groups.read', 'org.projects.read'],
    privileged: false,
  },
} as const satisfies Record<string, BuiltinRole>;
