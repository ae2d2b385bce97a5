import { maybeOne, type Queryable } from '../platform/db/db.ts';
import { builtinResources } from './builtin-resources.ts';
import type { ExchangePolicy, ResourceDefinition, ResourceGrant, ResourceScope } from './resource.ts';

export interface ResourceRow {
  realm_id: string;
  id: string;
  name: string;
  audience: string;
  verification_mode: ResourceDefinition['verificationMode'];
  token_format: ResourceDefinition['tokenFormat'];
  access_token_ttl_seconds: number;
  scopes: ResourceScope[];
  requires_organization: boolean;
  impersonation_enabled: boolean;
  impersonation_policy: ResourceDefinition['impersonationPolicy'];
  signing_algorithm: string;
  state: 'active' | 'disabled';
  version: number;
  created_at: Date;
  updated_at: Date;
}

export const resourceFromRow = (r: ResourceRow): ResourceDefinition => ({
  id: r.id,
  builtin: false,
  name: r.name,
  audience: r.audience,
  verificationMode: r.verification_mode,
  tokenFormat: r.token_format,
  accessTokenTtlSeconds: r.access_token_ttl_seconds,
  scopes: r.scopes,
  requiresOrganization: r.requires_organization,
  impersonationEnabled: r.impersonation_enabled,
  impersonationPolicy: r.impersonation_policy,
  signingAlgorithm: r.signing_algorithm,
  state: r.state,
  version: r.version,
});

export interface RealmRef {
  id: string;
  name: string;
}

/** A resource by audience URI: a built-in one or a registered row. */
export async function findResourceByAudience(
  q: Queryable,
  realm: RealmRef,
  publicOrigin: string,
  audience: string,
): Promise<ResourceDefinition | null> {
  const b = builtinResources(publicOrigin, realm.name).find((r) => r.audience === audience);
  if (b) return b;
  const row = await maybeOne<ResourceRow>(
    q,
    'select * from resources where realm_id = $1 and audience = $2',
    [realm.id, audience],
  );
  return row ? resourceFromRow(row) : null;
}

/** A resource by id (res_… or builtin:<name>). */
export async function findResourceById(
  q: Queryable,
  realm: RealmRef,
  publicOrigin: string,
  id: string,
): Promise<ResourceDefinition | null> {
  const b = builtinResources(publicOrigin, realm.name).find((r) => r.id === id);
  if (b) return b;
  const row = await maybeOne<ResourceRow>(q, 'select * from resources where realm_id = $1 and id = $2', [
    realm.id,
    id,
  ]);
  return row ? resourceFromRow(row) : null;
}

interface GrantRow {
  client_row_id: string;
  resource_id: string;
  allowed_scopes: string[];
  subject_types: string[];
  exchange_policy: ExchangePolicy | null;
}

const grantFromRow = (r: GrantRow): ResourceGrant => ({
  clientRowId: r.client_row_id,
  resourceId: r.resource_id,
  allowedScopes: r.allowed_scopes,
  subjectTypes: r.subject_types,
  exchangePolicy: r.exchange_policy,
});

export async function findResourceGrant(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  resourceId: string,
): Promise<ResourceGrant | null> {
  const row = await maybeOne<GrantRow>(
    q,
    `select client_row_id, resource_id, allowed_scopes, subject_types, exchange_policy
       from client_resource_grants where realm_id = $1 and client_row_id = $2 and resource_id = $3`,
    [realmId, clientRowId, resourceId],
  );
  return row ? grantFromRow(row) : null;
}
