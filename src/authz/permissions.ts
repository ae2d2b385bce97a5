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
  'realm.audit.export',
  'realm.audit.legal_hold',
  'realm.audit.correct',
  'realm.data.export',
] as const;

export type RealmPermission = (typeof REALM_PERMISSIONS)[number];

export interface BuiltinRole {
  name: string;
  description: string;
  permissions: readonly string[];
  /** Holding it makes MFA mandatory at sign-in (spec doc 1, MFA conditions). */
  privileged: boolean;
}

export const BUILTIN_ROLES = {
  realmAdmin: {
    name: 'realm-admin',
    description: 'Administers the realm: holds every realm permission',
    permissions: REALM_PERMISSIONS,
    privileged: true,
  },
  resourceServer: {
    name: 'resource-server',
    description: 'Asks for authorization decisions about tokens it receives',
    permissions: ['realm.authorization.check'],
    privileged: false,
  },
} as const satisfies Record<string, BuiltinRole>;
