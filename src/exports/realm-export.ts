// The realm data export file (spec doc 2, Realm data export; docs/jobs.md): NDJSON lines
// {kind, data}, the header first, then the configuration document, then each section in the
// spec's order, sorted by id, with exactly the fields the spec lists for it. Sections the service
// has no data model for yet (authorization policies) have no lines.
import type { Queryable } from '../platform/db/db.ts';
import * as read from './realm-export.repo.ts';

export const REALM_EXPORT_FORMAT = 'service.realm-export.v1';

/** The section kinds in file order (after header and configuration). */
export const REALM_EXPORT_SECTIONS = [
  'user',
  'organization',
  'membership',
  'group',
  'role_assignment',
  'authorization_policy',
  'project',
  'service_principal',
  'identity_provider',
  'webhook',
  'hook',
] as const;
export type RealmExportSection = (typeof REALM_EXPORT_SECTIONS)[number];

/** What the file never carries, named for the reader in the header (spec doc 2, Realm data export). */
export const REALM_EXPORT_EXCLUDED = [
  'password_verifiers',
  'totp_seeds',
  'recovery_codes',
  'passkey_credentials',
  'client_secrets',
  'webhook_secrets',
  'hook_secrets',
  'identity_provider_secrets',
  'keys',
  'active_tokens',
  'sessions',
  'grants',
  'consents',
  'audit_evidence',
  'deleted_accounts',
  'organization_and_project_roles',
  'builtin_roles',
  'inactive_clients',
  'invitations',
  'join_requests',
  'custom_domains',
  'api_keys',
  'legal_holds',
  'lifecycle_workflows',
  'plugins',
] as const;

type Row = Record<string, unknown>;
type Data = Record<string, unknown>;

const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : new Date(v as Date).toISOString();
const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

// Profile claims the user line names as fields of their own; the other attributes form `profile`.
const OWN_CLAIMS = ['given_name', 'family_name', 'locale', 'zoneinfo'] as const;

/** `credentials`: how many credentials of each kind the account has. */
function userLine(
  u: Row,
  identifiers: Row[],
  externalIds: Row[],
  federated: Row[],
  credentials: ReadonlyMap<string, number>,
): Data {
  const attributes = (json(u.attributes) ?? {}) as Record<string, unknown>;
  const profile = Object.fromEntries(
    Object.entries(attributes).filter(([k]) => !(OWN_CLAIMS as readonly string[]).includes(k)),
  );
  const claim = (k: string) => (typeof attributes[k] === 'string' ? attributes[k] : null);
  return {
    id: u.id,
    state: u.state,
    display_name: u.display_name,
    given_name: claim('given_name'),
    family_name: claim('family_name'),
    locale: claim('locale'),
    zoneinfo: claim('zoneinfo'),
    profile,
    admin_metadata: json(u.admin_metadata) ?? {},
    protected: u.protected,
    is_guest: u.is_guest,
    required_actions: u.required_actions,
    created_via: u.created_via,
    last_login_at: iso(u.last_login_at),
    created_at: iso(u.created_at),
    updated_at: iso(u.updated_at),
    identifiers: identifiers.map((i) => ({
      type: i.type,
      value: i.value,
      verified: i.verified,
      verified_at: iso(i.verified_at),
      primary: i.is_primary,
    })),
    external_ids: externalIds.map((x) => ({ source_system: x.source_system, source_id: x.source_id })),
    federated_identities: federated.map((f) => ({
      provider_id: f.provider_id,
      upstream_issuer: f.upstream_issuer,
      upstream_subject: f.upstream_subject,
    })),
    credentials: {
      password: credentials.has('password'),
      totp: credentials.has('totp'),
      hotp: credentials.has('hotp'),
      passkeys: credentials.get('passkey') ?? 0,
    },
  };
}

async function users(q: Queryable, realmId: string): Promise<Data[]> {
  const identifiers = read.groupBy(await read.exportIdentifiers(q, realmId), 'user_id');
  const externalIds = read.groupBy(await read.exportExternalIds(q, realmId), 'user_id');
  const federated = read.groupBy(await read.exportFederatedIdentities(q, realmId), 'user_id');
  const creds = new Map<string, Map<string, number>>();
  for (const c of await read.exportCredentialPresence(q, realmId)) {
    const counts = creds.get(c.user_id) ?? new Map<string, number>();
    counts.set(c.kind, (counts.get(c.kind) ?? 0) + 1);
    creds.set(c.user_id, counts);
  }
  return (await read.exportUsers(q, realmId)).map((u) =>
    userLine(
      u,
      identifiers.get(String(u.id)) ?? [],
      externalIds.get(String(u.id)) ?? [],
      federated.get(String(u.id)) ?? [],
      creds.get(String(u.id)) ?? new Map(),
    ),
  );
}

async function organizations(q: Queryable, realmId: string): Promise<Data[]> {
  const domains = read.groupBy(await read.exportDomains(q, realmId), 'organization_id');
  return (await read.exportOrganizations(q, realmId)).map((o) => ({
    id: o.id,
    slug: o.slug,
    display_name: o.display_name,
    state: o.state,
    locale: o.locale,
    time_zone: o.time_zone,
    metadata: json(o.metadata),
    contact: json(o.contact),
    external_id: o.external_id,
    policy: json(o.policy),
    template_name: o.template_name,
    template_version: o.template_version,
    created_at: iso(o.created_at),
    updated_at: iso(o.updated_at),
    domains: (domains.get(String(o.id)) ?? []).map((d) => ({
      domain: d.domain,
      verified: d.verified,
      created_at: iso(d.created_at),
    })),
  }));
}

async function memberships(q: Queryable, realmId: string): Promise<Data[]> {
  const roles = read.groupBy(await read.exportMembershipRoles(q, realmId), 'membership_id');
  return (await read.exportMemberships(q, realmId)).map((m) => ({
    id: m.id,
    organization_id: m.organization_id,
    user_id: m.user_id,
    state: m.state,
    source: m.source,
    external_id: m.external_id,
    metadata: json(m.metadata),
    joined_at: iso(m.joined_at),
    expires_at: iso(m.expires_at),
    created_at: iso(m.created_at),
    roles: (roles.get(String(m.id)) ?? []).map((r) => ({ role_id: r.role_id, role: r.role })),
  }));
}

async function groups(q: Queryable, realmId: string): Promise<Data[]> {
  const members = read.groupBy(await read.exportGroupMembers(q, realmId), 'group_id');
  return (await read.exportGroups(q, realmId)).map((g) => ({
    id: g.id,
    organization_id: g.organization_id,
    parent_id: g.parent_id,
    name: g.name,
    description: g.description,
    metadata: json(g.metadata),
    external_id: g.external_id,
    source: g.source,
    dynamic_rule: json(g.dynamic_rule),
    created_at: iso(g.created_at),
    members: (members.get(String(g.id)) ?? []).map((m) => ({
      subject_type: m.subject_type,
      subject_id: m.subject_id,
    })),
  }));
}

const roleAssignments = async (q: Queryable, realmId: string): Promise<Data[]> =>
  (await read.exportRoleAssignments(q, realmId)).map((a) => ({
    id: a.id,
    role_id: a.role_id,
    role: a.role,
    subject_type: a.subject_type,
    subject_id: a.subject_id,
    scope_type: a.scope_type,
    // Realm-wide assignments store an empty scope id.
    scope_id: a.scope_id === '' ? null : a.scope_id,
    conditions: json(a.conditions),
    valid_from: iso(a.valid_from),
    expires_at: iso(a.expires_at),
    source: a.source,
    reason: a.reason,
    created_at: iso(a.created_at),
  }));

const projects = async (q: Queryable, realmId: string): Promise<Data[]> =>
  (await read.exportProjects(q, realmId)).map((p) => ({ ...p, created_at: iso(p.created_at) }));

const servicePrincipals = async (q: Queryable, realmId: string): Promise<Data[]> =>
  (await read.exportServicePrincipals(q, realmId)).map((s) => ({
    ...s,
    allowed_organization_ids: s.allowed_organization_ids ?? null,
    created_at: iso(s.created_at),
  }));

const webhooks = async (q: Queryable, realmId: string): Promise<Data[]> =>
  (await read.exportWebhooks(q, realmId)).map((w) => ({
    ...w,
    event_types: json(w.event_types),
    created_at: iso(w.created_at),
  }));

const identityProviders = async (q: Queryable, realmId: string): Promise<Data[]> =>
  (await read.exportIdentityProviders(q, realmId)).map((p) => ({
    ...p,
    config: json(p.config),
    claim_mapping: json(p.claim_mapping),
    created_at: iso(p.created_at),
  }));

const hooks = async (q: Queryable, realmId: string): Promise<Data[]> =>
  (await read.exportHooks(q, realmId)).map((h) => ({ ...h, created_at: iso(h.created_at) }));

const none = async (): Promise<Data[]> => [];

/** The reader of each section; each is read on its own, not from one snapshot (spec doc 2). */
export const SECTION_READERS: Record<RealmExportSection, (q: Queryable, realmId: string) => Promise<Data[]>> =
  {
    user: users,
    organization: organizations,
    membership: memberships,
    group: groups,
    role_assignment: roleAssignments,
    // Not modelled by the service yet: no lines.
    authorization_policy: none,
    project: projects,
    service_principal: servicePrincipals,
    identity_provider: identityProviders,
    webhook: webhooks,
    hook: hooks,
  };

export const ndjsonLine = (kind: string, data: unknown): string => `${JSON.stringify({ kind, data })}\n`;
