// SQL of API resources, client resource grants and introspectors (migration 0005). Every
// statement filters on realm_id; built-in resources are not rows (builtin-resources.ts).
import { many, maybeOne, one, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { builtinResources } from './builtin-resources.ts';
import type { ExchangePolicy, ResourceDefinition, ResourceGrant, ResourceScope } from './resource.ts';
import type { ResourceInput } from './resources.decode.ts';

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
  // Built-ins answer to their audience and to their builtin:<name> id alike.
  const b = builtinResources(publicOrigin, realm.name).find(
    (r) => r.audience === audience || r.id === audience,
  );
  if (b) return b;
  const row = await maybeOne<ResourceRow>(
    q,
    'select * from resources where realm_id = $1 and audience = $2',
    [realm.id, audience],
  );
  return row ? resourceFromRow(row) : null;
}

export interface GrantRow {
  client_row_id: string;
  resource_id: string;
  allowed_scopes: string[];
  subject_types: string[];
  exchange_policy: ExchangePolicy | null;
}

export const grantFromRow = (r: GrantRow): ResourceGrant => ({
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

// ---- writes and lists of registered resources ------------------------------------------------

const resourceValues = (r: ResourceInput): unknown[] => [
  r.name,
  r.audience,
  r.verificationMode,
  r.tokenFormat,
  r.accessTokenTtlSeconds,
  JSON.stringify(r.scopes),
  r.requiresOrganization,
  r.impersonationEnabled,
  r.impersonationPolicy === null ? null : JSON.stringify(r.impersonationPolicy),
  r.signingAlgorithm,
];

export const insertResource = (tx: Tx, realmId: string, r: ResourceInput, now: Date): Promise<ResourceRow> =>
  one<ResourceRow>(
    tx,
    `insert into resources (name, audience, verification_mode, token_format, access_token_ttl_seconds, scopes,
       requires_organization, impersonation_enabled, impersonation_policy, signing_algorithm,
       realm_id, id, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) returning *`,
    [...resourceValues(r), realmId, newId('res', now.getTime()), now],
  );

/** Replaces every member and bumps the version (the ETag). */
export const updateResource = (
  tx: Tx,
  realmId: string,
  id: string,
  r: ResourceInput,
  now: Date,
): Promise<ResourceRow> =>
  one<ResourceRow>(
    tx,
    `update resources set name = $1, audience = $2, verification_mode = $3, token_format = $4,
       access_token_ttl_seconds = $5, scopes = $6, requires_organization = $7, impersonation_enabled = $8,
       impersonation_policy = $9, signing_algorithm = $10, version = version + 1, updated_at = $13
     where realm_id = $11 and id = $12 returning *`,
    [...resourceValues(r), realmId, id, now],
  );

export const lockResource = (tx: Tx, realmId: string, id: string): Promise<ResourceRow | null> =>
  maybeOne<ResourceRow>(tx, 'select * from resources where realm_id = $1 and id = $2 for update', [
    realmId,
    id,
  ]);

export const findResourceRow = (q: Queryable, realmId: string, id: string): Promise<ResourceRow | null> =>
  maybeOne<ResourceRow>(q, 'select * from resources where realm_id = $1 and id = $2', [realmId, id]);

export const findResourceRowByAudience = (
  q: Queryable,
  realmId: string,
  audience: string,
): Promise<ResourceRow | null> =>
  maybeOne<ResourceRow>(q, 'select * from resources where realm_id = $1 and audience = $2', [
    realmId,
    audience,
  ]);

export const listResourceRows = (q: Queryable, realmId: string): Promise<ResourceRow[]> =>
  many<ResourceRow>(q, 'select * from resources where realm_id = $1 order by created_at, id', [realmId]);

export async function listResourceAudiences(q: Queryable, realmId: string): Promise<string[]> {
  const rows = await many<{ audience: string }>(q, 'select audience from resources where realm_id = $1', [
    realmId,
  ]);
  return rows.map((r) => r.audience);
}

// ---- client resource grants ------------------------------------------------------------------

export interface GrantRecord extends ResourceGrant {
  clientId: string;
  createdAt: Date;
  updatedAt: Date;
}

interface GrantRecordRow extends GrantRow {
  client_id: string;
  created_at: Date;
  updated_at: Date;
}

const grantRecordFromRow = (r: GrantRecordRow): GrantRecord => ({
  ...grantFromRow(r),
  clientId: r.client_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const GRANT_COLUMNS = `g.client_row_id, g.resource_id, g.allowed_scopes, g.subject_types, g.exchange_policy,
  g.created_at, g.updated_at, c.client_id`;

export async function upsertResourceGrant(
  tx: Tx,
  realmId: string,
  g: ResourceGrant,
  now: Date,
): Promise<GrantRecord> {
  await tx.query(
    `insert into client_resource_grants (realm_id, client_row_id, resource_id, allowed_scopes, subject_types,
       exchange_policy, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7)
     on conflict (realm_id, client_row_id, resource_id) do update set allowed_scopes = excluded.allowed_scopes,
       subject_types = excluded.subject_types, exchange_policy = excluded.exchange_policy,
       updated_at = excluded.updated_at`,
    [
      realmId,
      g.clientRowId,
      g.resourceId,
      g.allowedScopes,
      g.subjectTypes,
      g.exchangePolicy === null ? null : JSON.stringify(g.exchangePolicy),
      now,
    ],
  );
  const rows = await listGrants(tx, realmId, 'g.client_row_id = $2 and g.resource_id = $3', [
    g.clientRowId,
    g.resourceId,
  ]);
  return rows[0] as GrantRecord;
}

async function listGrants(
  q: Queryable,
  realmId: string,
  where: string,
  params: unknown[],
): Promise<GrantRecord[]> {
  const rows = await many<GrantRecordRow>(
    q,
    `select ${GRANT_COLUMNS} from client_resource_grants g
       join clients c on c.realm_id = g.realm_id and c.id = g.client_row_id
     where g.realm_id = $1 and ${where} order by g.resource_id, c.client_id`,
    [realmId, ...params],
  );
  return rows.map(grantRecordFromRow);
}

export const listGrantsOfClient = (q: Queryable, realmId: string, clientRowId: string) =>
  listGrants(q, realmId, 'g.client_row_id = $2', [clientRowId]);

export const listGrantsOfResource = (q: Queryable, realmId: string, resourceId: string) =>
  listGrants(q, realmId, 'g.resource_id = $2', [resourceId]);

/** Grants whose exchange policy accepts tokens of this audience. */
export const listGrantsAcceptingAudience = (q: Queryable, realmId: string, audience: string) =>
  listGrants(q, realmId, `g.exchange_policy -> 'acceptFromAudiences' @> jsonb_build_array($2::text)`, [
    audience,
  ]);

export async function findGrantRecord(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  resourceId: string,
): Promise<GrantRecord | null> {
  const rows = await listGrants(q, realmId, 'g.client_row_id = $2 and g.resource_id = $3', [
    clientRowId,
    resourceId,
  ]);
  return rows[0] ?? null;
}

export async function deleteResourceGrant(
  tx: Tx,
  realmId: string,
  clientRowId: string,
  resourceId: string,
): Promise<boolean> {
  const r = await tx.query(
    `delete from client_resource_grants where realm_id = $1 and client_row_id = $2 and resource_id = $3
     returning resource_id`,
    [realmId, clientRowId, resourceId],
  );
  return r.rows.length > 0;
}

// ---- introspectors ---------------------------------------------------------------------------

export interface IntrospectorRecord {
  clientId: string;
  clientRowId: string;
  createdAt: Date;
}

/** False when the client was already registered (nothing written). */
export async function insertIntrospector(
  tx: Tx,
  realmId: string,
  resourceId: string,
  clientRowId: string,
  now: Date,
): Promise<boolean> {
  const r = await tx.query(
    `insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at)
     values ($1, $2, $3, $4) on conflict do nothing returning client_row_id`,
    [realmId, resourceId, clientRowId, now],
  );
  return r.rows.length > 0;
}

export async function listIntrospectors(
  q: Queryable,
  realmId: string,
  resourceId: string,
): Promise<IntrospectorRecord[]> {
  const rows = await many<{ client_id: string; client_row_id: string; created_at: Date }>(
    q,
    `select c.client_id, i.client_row_id, i.created_at from resource_introspectors i
       join clients c on c.realm_id = i.realm_id and c.id = i.client_row_id
     where i.realm_id = $1 and i.resource_id = $2 order by c.client_id`,
    [realmId, resourceId],
  );
  return rows.map((r) => ({ clientId: r.client_id, clientRowId: r.client_row_id, createdAt: r.created_at }));
}

export async function deleteIntrospector(
  tx: Tx,
  realmId: string,
  resourceId: string,
  clientRowId: string,
): Promise<boolean> {
  const r = await tx.query(
    `delete from resource_introspectors where realm_id = $1 and resource_id = $2 and client_row_id = $3
     returning client_row_id`,
    [realmId, resourceId, clientRowId],
  );
  return r.rows.length > 0;
}

/** Every client resource grant of the realm (configuration export and import). */
export const listGrantsOfRealm = (q: Queryable, realmId: string) => listGrants(q, realmId, 'true', []);
