// Use cases of API resources, client resource grants and introspectors (spec doc 1, API resource
// (audience) definition; Resources, grants and decisions). Each write checks its rules, writes the
// row and its audit in one transaction; the `*InTx` variants let a composing use case (the
// configuration import) run them inside its own transaction.

import type { Actor } from '../audit/audit.types.ts';
import { recorder } from '../audit/index.ts';
import { type ClientRow, findClient } from '../clients/index.ts';
import { BUILTIN_ADMIN } from '../kernel/audiences.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { builtinResources } from './builtin-resources.ts';
import { defaultSubjectTypes, grantProblems } from './grant-spec.ts';
import type { ResourceDefinition } from './resource.ts';
import { type GrantInput, ifMatchSatisfied, type ResourceInput } from './resources.decode.ts';
import {
  deleteIntrospector,
  deleteResourceGrant,
  findGrantRecord,
  findResourceRow,
  findResourceRowByAudience,
  type GrantRecord,
  type IntrospectorRecord,
  insertIntrospector,
  insertResource,
  listGrantsAcceptingAudience,
  listGrantsOfClient,
  listGrantsOfResource,
  listIntrospectors,
  listResourceAudiences,
  listResourceRows,
  lockResource,
  type RealmRef,
  type ResourceRow,
  resourceFromRow,
  updateResource,
  upsertResourceGrant,
} from './resources.repo.ts';

/** Where a use case runs: the realm, the public origin its built-in audiences derive from, who and when. */
export interface ResourceCall {
  realm: RealmRef;
  publicOrigin: string;
  actor: Actor;
  now: Date;
}

/** A resource with the timestamps of its row (built-ins have none). */
export interface ResourceView {
  resource: ResourceDefinition;
  createdAt: Date | null;
  updatedAt: Date | null;
}

const viewOf = (row: ResourceRow): ResourceView => ({
  resource: resourceFromRow(row),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const builtinView = (resource: ResourceDefinition): ResourceView => ({
  resource,
  createdAt: null,
  updatedAt: null,
});

// A NUL cannot be stored as text, so no id or audience has one; answering 404 keeps it from SQL.
const hasNul = (s: string): boolean => s.includes('\0');

/** A resource named by id (res_…), built-in id (builtin:…) or audience URI. */
export async function resolveResource(
  q: Queryable,
  realm: RealmRef,
  publicOrigin: string,
  ref: string,
): Promise<ResourceView | null> {
  if (hasNul(ref)) return null;
  const builtin = builtinResources(publicOrigin, realm.name).find((r) => r.id === ref || r.audience === ref);
  if (builtin) return builtinView(builtin);
  const row =
    (await findResourceRow(q, realm.id, ref)) ?? (await findResourceRowByAudience(q, realm.id, ref));
  return row ? viewOf(row) : null;
}

async function requireResource(q: Queryable, c: ResourceCall, ref: string): Promise<ResourceView> {
  const found = await resolveResource(q, c.realm, c.publicOrigin, ref);
  if (!found) throw problem.notFound('no such resource');
  return found;
}

async function requireClient(q: Queryable, realmId: string, clientId: string): Promise<ClientRow> {
  const client = hasNul(clientId) ? null : await findClient(q, realmId, clientId);
  if (!client) throw problem.notFound('no such client');
  return client;
}

/** The recorder of a resource change; the routes give these records no correlation id. */
const evidence = (tx: Tx, c: ResourceCall) =>
  recorder(tx, { realmId: c.realm.id, actor: c.actor, correlationId: null, now: c.now });

// ---- resources -------------------------------------------------------------------------------

/** The audience must name only this resource: not a built-in one, not another row. */
async function ensureAudienceFree(tx: Tx, c: ResourceCall, audience: string, selfId: string | null) {
  if (builtinResources(c.publicOrigin, c.realm.name).some((b) => b.audience === audience))
    throw problem.conflict('the audience is a built-in audience of this realm');
  const other = await findResourceRowByAudience(tx, c.realm.id, audience);
  if (other && other.id !== selfId) throw problem.conflict('another resource has this audience');
}

export async function createResourceInTx(
  tx: Tx,
  c: ResourceCall,
  input: ResourceInput,
): Promise<ResourceView> {
  await ensureAudienceFree(tx, c, input.audience, null);
  const row = await insertResource(tx, c.realm.id, input, c.now);
  await evidence(tx, c).audit('resource.created', {
    category: 'configuration',
    target: { type: 'resource', id: row.id },
    data: { audience: row.audience, name: row.name },
  });
  return viewOf(row);
}

export const createResource = (db: Db, c: ResourceCall, input: ResourceInput) =>
  db.tx((tx) => createResourceInTx(tx, c, input));

/**
 * Grants keep naming what the resource declares: a replacement may not drop a scope a grant still
 * allows, nor move the audience while another grant's exchange policy accepts it.
 */
async function ensureGrantsStillValid(tx: Tx, c: ResourceCall, current: ResourceRow, next: ResourceInput) {
  const declared = new Set(next.scopes.map((s) => s.name));
  for (const g of await listGrantsOfResource(tx, c.realm.id, current.id)) {
    const used = [...g.allowedScopes, ...(g.exchangePolicy?.maxScopes ?? [])];
    const dropped = used.find((s) => !declared.has(s));
    if (dropped !== undefined)
      throw problem.conflict(`scope ${dropped} is granted to client ${g.clientId}; change that grant first`);
  }
  if (next.audience !== current.audience) {
    const accepting = await listGrantsAcceptingAudience(tx, c.realm.id, current.audience);
    if (accepting.length > 0)
      throw problem.conflict(
        `the exchange policy of client ${accepting[0]?.clientId} accepts the current audience`,
      );
  }
}

const changedMembers = (before: ResourceDefinition, after: ResourceDefinition): string[] => {
  const keys = [
    ['name', 'name'],
    ['audience', 'audience'],
    ['verificationMode', 'verification_mode'],
    ['tokenFormat', 'token_format'],
    ['accessTokenTtlSeconds', 'access_token_ttl_seconds'],
    ['scopes', 'scopes'],
    ['requiresOrganization', 'requires_organization'],
    ['impersonationEnabled', 'impersonation_enabled'],
    ['impersonationPolicy', 'impersonation_policy'],
    ['signingAlgorithm', 'signing_algorithm'],
  ] as const;
  return keys.filter(([k]) => JSON.stringify(before[k]) !== JSON.stringify(after[k])).map(([, wire]) => wire);
};

/** PUT: replaces the whole definition; `ifMatch` is the raw If-Match header. */
export async function replaceResourceInTx(
  tx: Tx,
  c: ResourceCall,
  ref: string,
  input: ResourceInput,
  ifMatch: string | undefined,
): Promise<ResourceView> {
  const found = await requireResource(tx, c, ref);
  if (found.resource.builtin) throw problem.conflict('built-in resources cannot be changed');
  const current = await lockResource(tx, c.realm.id, found.resource.id);
  if (!current) throw problem.notFound('no such resource');
  if (!ifMatchSatisfied(ifMatch, current.version)) throw problem.preconditionFailed();
  await ensureAudienceFree(tx, c, input.audience, current.id);
  await ensureGrantsStillValid(tx, c, current, input);
  const row = await updateResource(tx, c.realm.id, current.id, input, c.now);
  await evidence(tx, c).audit('resource.updated', {
    category: 'configuration',
    target: { type: 'resource', id: row.id },
    data: {
      audience: row.audience,
      version: row.version,
      changed: changedMembers(resourceFromRow(current), resourceFromRow(row)),
    },
  });
  return viewOf(row);
}

export const replaceResource = (
  db: Db,
  c: ResourceCall,
  ref: string,
  input: ResourceInput,
  ifMatch: string | undefined,
) => db.tx((tx) => replaceResourceInTx(tx, c, ref, input, ifMatch));

/** Built-ins first, then registered resources in creation order. */
export async function listResources(
  q: Queryable,
  realm: RealmRef,
  publicOrigin: string,
): Promise<ResourceView[]> {
  const rows = await listResourceRows(q, realm.id);
  return [...builtinResources(publicOrigin, realm.name).map(builtinView), ...rows.map(viewOf)];
}

export async function getResource(
  q: Queryable,
  realm: RealmRef,
  publicOrigin: string,
  ref: string,
): Promise<ResourceView> {
  const found = await resolveResource(q, realm, publicOrigin, ref);
  if (!found) throw problem.notFound('no such resource');
  return found;
}

// ---- client resource grants ------------------------------------------------------------------

/** The built-in CLI client's access is defined in code; its grants are not administered. */
function ensureAdministeredClient(client: ClientRow): void {
  if (client.builtin) throw problem.conflict('the grants of a built-in client cannot be changed');
}

/**
 * The resource with its row locked, so a replacement that drops a scope cannot commit between
 * this grant's check of the declared scopes and its write (replaceResourceInTx locks it too).
 */
async function requireLockedResource(tx: Tx, c: ResourceCall, ref: string): Promise<ResourceDefinition> {
  const { resource } = await requireResource(tx, c, ref);
  if (resource.builtin) return resource;
  const row = await lockResource(tx, c.realm.id, resource.id);
  if (!row) throw problem.notFound('no such resource');
  return resourceFromRow(row);
}

async function realmAudiences(q: Queryable, c: ResourceCall): Promise<Set<string>> {
  const builtins = builtinResources(c.publicOrigin, c.realm.name).map((b) => b.audience);
  return new Set([...builtins, ...(await listResourceAudiences(q, c.realm.id))]);
}

export async function setGrantInTx(
  tx: Tx,
  c: ResourceCall,
  clientId: string,
  ref: string,
  input: GrantInput,
): Promise<GrantRecord> {
  const client = await requireClient(tx, c.realm.id, clientId);
  ensureAdministeredClient(client);
  const resource = await requireLockedResource(tx, c, ref);
  const errors = grantProblems(
    {
      scopes: input.allowedScopes,
      ...(input.exchangePolicy ? { exchangePolicy: input.exchangePolicy } : {}),
    },
    {
      declaredScopes: new Set(resource.scopes.map((s) => s.name)),
      realmAudiences: await realmAudiences(tx, c),
    },
    'allowed_scopes',
  );
  if (errors.length > 0) throw problem.validation(errors);
  const grant = await upsertResourceGrant(
    tx,
    c.realm.id,
    {
      clientRowId: client.id,
      resourceId: resource.id,
      allowedScopes: input.allowedScopes,
      subjectTypes: input.subjectTypes ?? defaultSubjectTypes(client.type),
      exchangePolicy: input.exchangePolicy ?? null,
    },
    c.now,
  );
  await evidence(tx, c).audit('client.resource_grant.set', {
    category: 'configuration',
    target: { type: 'client', id: client.id },
    // Access to the administration API is as sensitive as a privileged role.
    ...(resource.id === BUILTIN_ADMIN ? { signal: 'privileged_grant' as const } : {}),
    data: {
      client_id: client.client_id,
      resource_id: resource.id,
      audience: resource.audience,
      allowed_scopes: grant.allowedScopes,
      subject_types: grant.subjectTypes,
      exchange_policy: grant.exchangePolicy,
    },
  });
  return grant;
}

export const setGrant = (db: Db, c: ResourceCall, clientId: string, ref: string, input: GrantInput) =>
  db.tx((tx) => setGrantInTx(tx, c, clientId, ref, input));

export async function listClientGrants(
  q: Queryable,
  realm: RealmRef,
  clientId: string,
): Promise<GrantRecord[]> {
  const client = await requireClient(q, realm.id, clientId);
  return listGrantsOfClient(q, realm.id, client.id);
}

export async function getGrant(
  q: Queryable,
  c: Omit<ResourceCall, 'actor' | 'now'>,
  clientId: string,
  ref: string,
) {
  const client = await requireClient(q, c.realm.id, clientId);
  const found = await resolveResource(q, c.realm, c.publicOrigin, ref);
  if (!found) throw problem.notFound('no such resource');
  const grant = await findGrantRecord(q, c.realm.id, client.id, found.resource.id);
  if (!grant) throw problem.notFound('the client has no grant for this resource');
  return grant;
}

export async function removeGrant(db: Db, c: ResourceCall, clientId: string, ref: string): Promise<void> {
  await db.tx(async (tx) => {
    const client = await requireClient(tx, c.realm.id, clientId);
    ensureAdministeredClient(client);
    const { resource } = await requireResource(tx, c, ref);
    if (!(await deleteResourceGrant(tx, c.realm.id, client.id, resource.id)))
      throw problem.notFound('the client has no grant for this resource');
    await evidence(tx, c).audit('client.resource_grant.removed', {
      category: 'configuration',
      target: { type: 'client', id: client.id },
      data: { client_id: client.client_id, resource_id: resource.id, audience: resource.audience },
    });
  });
}

// ---- introspectors ---------------------------------------------------------------------------

/** Introspection of the built-in audiences stays with the service, which checks them itself. */
function ensureRegisteredResource(resource: ResourceDefinition): void {
  if (resource.builtin) throw problem.conflict('built-in resources have no introspectors');
}

/** Spec doc 2, Authentication 7: introspectors authenticate, so they must be confidential. */
function ensureIntrospectorClient(client: ClientRow): void {
  if (client.token_endpoint_auth_method === 'none')
    throw problem.validation([
      { field: 'client', code: 'public_client', detail: 'a confidential client is needed' },
    ]);
  if (client.state !== 'active')
    throw problem.validation([
      { field: 'client', code: 'client_disabled', detail: 'the client is not active' },
    ]);
}

export async function addIntrospectorInTx(
  tx: Tx,
  c: ResourceCall,
  ref: string,
  clientId: string,
): Promise<{ created: boolean; introspector: IntrospectorRecord }> {
  const { resource } = await requireResource(tx, c, ref);
  ensureRegisteredResource(resource);
  const client = await requireClient(tx, c.realm.id, clientId);
  ensureIntrospectorClient(client);
  const created = await insertIntrospector(tx, c.realm.id, resource.id, client.id, c.now);
  if (created) {
    await evidence(tx, c).audit('resource.introspector.added', {
      category: 'configuration',
      target: { type: 'resource', id: resource.id },
      data: { client_id: client.client_id, audience: resource.audience },
    });
  }
  const all = await listIntrospectors(tx, c.realm.id, resource.id);
  const introspector = all.find((i) => i.clientRowId === client.id) as IntrospectorRecord;
  return { created, introspector };
}

export const addIntrospector = (db: Db, c: ResourceCall, ref: string, clientId: string) =>
  db.tx((tx) => addIntrospectorInTx(tx, c, ref, clientId));

export async function listResourceIntrospectors(
  q: Queryable,
  realm: RealmRef,
  publicOrigin: string,
  ref: string,
): Promise<IntrospectorRecord[]> {
  const { resource } = await getResource(q, realm, publicOrigin, ref);
  return resource.builtin ? [] : listIntrospectors(q, realm.id, resource.id);
}

export async function removeIntrospector(
  db: Db,
  c: ResourceCall,
  ref: string,
  clientId: string,
): Promise<void> {
  await db.tx(async (tx) => {
    const { resource } = await requireResource(tx, c, ref);
    const client = await requireClient(tx, c.realm.id, clientId);
    if (resource.builtin || !(await deleteIntrospector(tx, c.realm.id, resource.id, client.id)))
      throw problem.notFound('the client is not an introspector of this resource');
    await evidence(tx, c).audit('resource.introspector.removed', {
      category: 'configuration',
      target: { type: 'resource', id: resource.id },
      data: { client_id: client.client_id, audience: resource.audience },
    });
  });
}
