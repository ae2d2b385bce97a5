// Writing a realm's configuration document (spec doc 1, Configuration document; Import semantics 9):
// exactly the members the import reads, in a stable order so the file diffs cleanly in version
// control, leaving out what rule 9 leaves out and naming those categories in `excluded`.
import {
  type ClientRecord,
  findSamlSettings,
  listClientRecords,
  presentSamlSettings,
  presentTlsClientAuth,
  type SamlSettings,
} from '../clients/index.ts';
import type { Queryable } from '../platform/db/db.ts';
import { currentPolicy, type RealmRow } from '../realms/index.ts';
import {
  builtinResources,
  type GrantRecord,
  listGrantsOfRealm,
  listResourceRows,
  type ResourceDefinition,
  resourceFromRow,
} from '../resources/index.ts';
import { listPermissions, listRoles, type PermissionRow, type RoleRow } from '../roles/index.ts';
import { CONFIG_FORMAT } from './config-document.ts';

type Json = Record<string, unknown>;

/** What every export leaves out (docs/configuration-as-code.md, "What an export leaves out"). */
export const EXPORT_EXCLUDED = [
  'client_secrets',
  'signing_keys',
  'encryption_keys',
  'connector_credentials',
  'identity_provider_credentials',
  'user_credentials',
  'environment_bound_identifiers',
  'builtin_resources',
  'builtin_clients',
  'inactive_clients',
  'client_registrations',
  'builtin_roles',
  'organization_and_project_roles',
  'builtin_permissions',
] as const;

export interface ConfigurationDocument {
  format: typeof CONFIG_FORMAT;
  realm: { name: string; display_name: string; policy_revision: number };
  excluded: string[];
  policy: Json;
  resources: Json[];
  clients: Json[];
  permissions: Json[];
  roles: Json[];
  client_resource_grants: Record<string, Record<string, Json>>;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Objects with their members in sorted order, at every depth (lists keep their order). */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sorted(v[k])]),
  );
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function resourceOut(r: ResourceDefinition): Json {
  const p = r.impersonationPolicy;
  return {
    name: r.name,
    audience: r.audience,
    verification_mode: r.verificationMode,
    token_format: r.tokenFormat,
    access_token_ttl_seconds: r.accessTokenTtlSeconds,
    scopes: r.scopes.map((s) => ({
      name: s.name,
      required_permissions: s.requiredPermissions ?? [],
      ...(s.stepUpAcr ? { step_up_acr: s.stepUpAcr } : {}),
      ...(s.maxAuthAgeSeconds !== undefined ? { max_auth_age_seconds: s.maxAuthAgeSeconds } : {}),
      sensitivity: s.sensitivity ?? 'normal',
    })),
    requires_organization: r.requiresOrganization,
    impersonation_enabled: r.impersonationEnabled,
    ...(p
      ? {
          impersonation_policy: {
            allowed_scopes: p.allowedScopes,
            write_scopes: p.writeScopes,
            write_actions: p.writeActions,
            support_client_ids: p.supportClientIds,
            contract_version: p.contractVersion,
          },
        }
      : {}),
    signing_algorithm: r.signingAlgorithm,
  };
}

/** A saml client carries its SAML settings; the realm's SAML signing keys stay out. */
function clientOut(c: ClientRecord, saml: SamlSettings | null): Json {
  return {
    client_id: c.client_id,
    name: c.name,
    ...(c.description !== null ? { description: c.description } : {}),
    type: c.type,
    redirect_uris: c.redirect_uris,
    post_logout_redirect_uris: c.post_logout_redirect_uris,
    allowed_origins: c.allowed_origins,
    grant_types: c.grant_types,
    token_endpoint_auth_method: c.token_endpoint_auth_method,
    consent_mode: c.consent_mode,
    token_policy: { require_mfa: c.require_mfa },
    allow_remember_me: c.allow_remember_me,
    id_token_claims: c.id_token_claims,
    // Written only when set, so documents of clients without it stay as they were.
    ...(c.require_pushed_authorization_requests ? { require_pushed_authorization_requests: true } : {}),
    ...(c.jwks !== null ? { jwks: c.jwks } : {}),
    ...presentTlsClientAuth(c.tls_client_auth),
    ...(c.backchannel_logout_uri !== null ? { backchannel_logout_uri: c.backchannel_logout_uri } : {}),
    ...(c.backchannel_logout_session_required ? { backchannel_logout_session_required: true } : {}),
    ...(saml ? { saml: presentSamlSettings(saml) } : {}),
  };
}

const permissionOut = (p: PermissionRow): Json => ({
  name: p.name,
  ...(p.description !== null ? { description: p.description } : {}),
  sensitivity: p.sensitivity,
});

const roleOut = (r: RoleRow): Json => ({
  name: r.name,
  description: r.description,
  scope: r.scope,
  permissions: r.permissions,
});

const grantOut = (g: GrantRecord): Json => ({
  scopes: g.allowedScopes,
  subject_types: g.subjectTypes,
  ...(g.exchangePolicy
    ? {
        exchange_policy: {
          accept_from_audiences: g.exchangePolicy.acceptFromAudiences,
          max_scopes: g.exchangePolicy.maxScopes,
        },
      }
    : {}),
});

const ALL = { after: null, limit: 1_000_000 };

export interface ExportTarget {
  realm: Pick<RealmRow, 'id' | 'name' | 'display_name'>;
  /** server.public_origin: the built-in audiences derive from it. */
  publicOrigin: string;
}

/**
 * The realm's configuration document (format service.realm-config.v1), as the import reads it.
 * Pure reads: run it inside a transaction (or a repeatable-read snapshot) for a consistent export.
 */
export async function exportConfiguration(
  q: Queryable,
  target: ExportTarget,
): Promise<ConfigurationDocument> {
  const { realm } = target;
  const policy = await currentPolicy(q, realm.id);
  const resources = (await listResourceRows(q, realm.id)).map(resourceFromRow);
  const audienceOf = new Map<string, string>(resources.map((r) => [r.id, r.audience]));
  for (const b of builtinResources(target.publicOrigin, realm.name)) audienceOf.set(b.id, b.id);
  const clients = (await listClientRecords(q, realm.id, { state: 'active' }, null, ALL.limit)).filter(
    (c) => !c.builtin,
  );
  const exported = new Set(clients.map((c) => c.client_id));
  const grants: Record<string, Record<string, Json>> = {};
  const allGrants = (await listGrantsOfRealm(q, realm.id)).filter((g) => exported.has(g.clientId));
  for (const clientId of [...new Set(allGrants.map((g) => g.clientId))].sort(byText)) {
    const mine = allGrants
      .filter((g) => g.clientId === clientId)
      .map((g) => [audienceOf.get(g.resourceId) ?? g.resourceId, grantOut(g)] as const)
      .sort(([a], [b]) => byText(a, b));
    grants[clientId] = Object.fromEntries(mine);
  }
  const roles = (await listRoles(q, realm.id, { kind: 'realm' }, ALL)).filter((r) => !r.builtin);
  return {
    format: CONFIG_FORMAT,
    realm: { name: realm.name, display_name: realm.display_name, policy_revision: policy.revision },
    excluded: [...EXPORT_EXCLUDED],
    policy: sorted(policy.document) as Json,
    resources: resources.sort((a, b) => byText(a.audience, b.audience)).map(resourceOut),
    clients: await Promise.all(
      clients
        .sort((a, b) => byText(a.client_id, b.client_id))
        .map(async (c) => clientOut(c, c.type === 'saml' ? await findSamlSettings(q, realm.id, c.id) : null)),
    ),
    permissions: (await listPermissions(q, realm.id, ALL))
      .sort((a, b) => byText(a.name, b.name))
      .map(permissionOut),
    roles: roles.sort((a, b) => byText(a.name, b.name)).map(roleOut),
    client_resource_grants: grants,
  };
}
