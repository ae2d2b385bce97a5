// SQL of organizations and their domains. Deleted (tombstoned) organizations are not found.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import type {
  Contact,
  DomainRow,
  OrganizationPolicy,
  OrganizationRow,
  OrganizationState,
} from './organizations.types.ts';

export interface OrganizationSettings {
  displayName: string;
  locale: string | null;
  timeZone: string | null;
  metadata: Record<string, unknown>;
  contact: Contact | null;
  externalId: string | null;
  policy: OrganizationPolicy;
}

export interface NewOrganization extends OrganizationSettings {
  id: string;
  slug: string;
}

/** Parameters of display_name, locale, time_zone, metadata, contact, external_id and policy, in that order. */
const settingsParams = (s: OrganizationSettings) => [
  s.displayName,
  s.locale,
  s.timeZone,
  JSON.stringify(s.metadata),
  s.contact === null ? null : JSON.stringify(s.contact),
  s.externalId,
  JSON.stringify(s.policy),
];

export async function insertOrganization(
  tx: Tx,
  realmId: string,
  o: NewOrganization,
  now: Date,
): Promise<OrganizationRow> {
  const r = await tx.query<OrganizationRow>(
    `insert into organizations (realm_id, id, slug, display_name, state, locale, time_zone, metadata, contact,
       external_id, policy, created_at, updated_at)
     values ($1, $2, $3, $4, 'active', $5, $6, $7, $8, $9, $10, $11, $11) returning *`,
    [realmId, o.id, o.slug, ...settingsParams(o), now],
  );
  return r.rows[0] as OrganizationRow;
}

export const findOrganization = (q: Queryable, realmId: string, orgId: string) =>
  maybeOne<OrganizationRow>(
    q,
    `select * from organizations where realm_id = $1 and id = $2 and state <> 'deleted'`,
    [realmId, orgId],
  );

/** Like findOrganization, holding the row: changes to one organization serialize on it. */
export const lockOrganization = (tx: Tx, realmId: string, orgId: string) =>
  maybeOne<OrganizationRow>(
    tx,
    `select * from organizations where realm_id = $1 and id = $2 and state <> 'deleted' for update`,
    [realmId, orgId],
  );

export const findOrganizationBySlug = (q: Queryable, realmId: string, slug: string) =>
  maybeOne<{ id: string }>(
    q,
    `select id from organizations where realm_id = $1 and lower(slug) = lower($2) and state <> 'deleted'`,
    [realmId, slug],
  );

export const findOrganizationByExternalId = (q: Queryable, realmId: string, externalId: string) =>
  maybeOne<{ id: string }>(
    q,
    `select id from organizations where realm_id = $1 and external_id = $2 and state <> 'deleted'`,
    [realmId, externalId],
  );

/** One keyset page in id (creation) order. */
export const listOrganizations = (
  q: Queryable,
  realmId: string,
  page: { after: string | null; limit: number; state: string | null; slug: string | null },
) =>
  many<OrganizationRow>(
    q,
    `select * from organizations
      where realm_id = $1 and state <> 'deleted' and ($2::text is null or id > $2)
        and ($4::text is null or state = $4) and ($5::text is null or lower(slug) = lower($5))
      order by id limit $3`,
    [realmId, page.after, page.limit, page.state, page.slug],
  );

/** Replaces the settings and bumps the version (the ETag). */
export async function updateOrganizationSettings(
  tx: Tx,
  realmId: string,
  orgId: string,
  s: OrganizationSettings,
  now: Date,
): Promise<OrganizationRow> {
  const r = await tx.query<OrganizationRow>(
    `update organizations set display_name = $3, locale = $4, time_zone = $5, metadata = $6, contact = $7,
       external_id = $8, policy = $9, version = version + 1, updated_at = $10
      where realm_id = $1 and id = $2 returning *`,
    [realmId, orgId, ...settingsParams(s), now],
  );
  return r.rows[0] as OrganizationRow;
}

export async function setOrganizationState(
  tx: Tx,
  realmId: string,
  orgId: string,
  state: OrganizationState,
  now: Date,
  deletionJobId?: string,
): Promise<OrganizationRow> {
  const r = await tx.query<OrganizationRow>(
    `update organizations set state = $3, deletion_job_id = coalesce($5, deletion_job_id),
       version = version + 1, updated_at = $4
      where realm_id = $1 and id = $2 returning *`,
    [realmId, orgId, state, now, deletionJobId ?? null],
  );
  return r.rows[0] as OrganizationRow;
}

/** A change shown in the representation other than its own columns (domains) moves the ETag too. */
export async function touchOrganization(tx: Tx, realmId: string, orgId: string, now: Date): Promise<void> {
  await tx.query(
    'update organizations set version = version + 1, updated_at = $3 where realm_id = $1 and id = $2',
    [realmId, orgId, now],
  );
}

// ---- domains ---------------------------------------------------------------------------------

export const listDomains = (q: Queryable, realmId: string, orgIds: readonly string[]) =>
  many<DomainRow>(
    q,
    `select domain, organization_id, verified, created_at from organization_domains
      where realm_id = $1 and organization_id = any ($2::text[]) order by domain`,
    [realmId, orgIds],
  );

export const findDomain = (q: Queryable, realmId: string, domain: string) =>
  maybeOne<DomainRow>(
    q,
    `select domain, organization_id, verified, created_at from organization_domains
      where realm_id = $1 and domain = $2`,
    [realmId, domain],
  );

export async function insertDomain(
  tx: Tx,
  realmId: string,
  orgId: string,
  domain: string,
  now: Date,
): Promise<DomainRow> {
  const r = await tx.query<DomainRow>(
    `insert into organization_domains (realm_id, domain, organization_id, created_at) values ($1, $2, $3, $4)
     returning domain, organization_id, verified, created_at`,
    [realmId, domain, orgId, now],
  );
  return r.rows[0] as DomainRow;
}

export async function deleteDomain(tx: Tx, realmId: string, orgId: string, domain: string): Promise<boolean> {
  const r = await tx.query(
    'delete from organization_domains where realm_id = $1 and organization_id = $2 and domain = $3',
    [realmId, orgId, domain],
  );
  return r.rowCount > 0;
}

// ---- deletion side effects (doc 2, Organization deletion) ---------------------------------------

export async function disableOwnedServicePrincipals(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<string[]> {
  const r = await tx.query<{ id: string }>(
    `update service_principals set state = 'disabled', updated_at = $3
      where realm_id = $1 and owner_organization_id = $2 and state = 'active' returning id`,
    [realmId, orgId, now],
  );
  return r.rows.map((x) => x.id);
}

/**
 * Revokes every live API key of the principals the organization owns, whatever their state (doc 2,
 * Organization deletion: automation credentials end in the request transaction); the keys revoked.
 */
export async function revokeOwnedApiKeys(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<{ id: string; service_principal_id: string }[]> {
  const r = await tx.query<{ id: string; service_principal_id: string }>(
    `update api_keys k set revoked_at = $3
       from service_principals p
      where k.realm_id = $1 and k.revoked_at is null
        and p.realm_id = k.realm_id and p.id = k.service_principal_id and p.owner_organization_id = $2
      returning k.id, k.service_principal_id`,
    [realmId, orgId, now],
  );
  return r.rows;
}

export async function suspendOwnedProjects(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<number> {
  const r = await tx.query(
    `update projects set state = 'suspended', updated_at = $3
      where realm_id = $1 and owner_organization_id = $2 and state = 'active'`,
    [realmId, orgId, now],
  );
  return r.rowCount;
}
