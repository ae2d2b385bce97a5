// Creating, reading, listing and changing organizations and their domains (spec doc 1, "What the
// service does" 1; doc 2, export record "organization"). Each change writes its row, its audit
// record and its outbox event in one transaction.

import { inChange } from '../audit/index.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { cutPage } from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { ownerRoleId } from '../roles/owner-rule.ts';
import {
  assignThroughMembership,
  requireChangeable,
  requireOrganization,
  requireUser,
} from './membership-rules.ts';
import { insertMembership } from './memberships.repo.ts';
import { auditOrg } from './org-records.ts';
import type { CreateOrganizationInput, PatchOrganizationInput } from './organizations.decode.ts';
import type { OrganizationView } from './organizations.present.ts';
import {
  deleteDomain,
  findDomain,
  findOrganization,
  findOrganizationByExternalId,
  findOrganizationBySlug,
  insertDomain,
  insertOrganization,
  listDomains,
  listOrganizations,
  touchOrganization,
  updateOrganizationSettings,
} from './organizations.repo.ts';
import {
  DEFAULT_ORGANIZATION_POLICY,
  type DomainRow,
  type OrganizationRow,
  type OrgCall,
  type Page,
} from './organizations.types.ts';

async function viewsOf(q: Queryable, realmId: string, orgs: OrganizationRow[]): Promise<OrganizationView[]> {
  const domains =
    orgs.length === 0
      ? []
      : await listDomains(
          q,
          realmId,
          orgs.map((o) => o.id),
        );
  return orgs.map((org) => ({ org, domains: domains.filter((d) => d.organization_id === org.id) }));
}

export async function viewOf(q: Queryable, realmId: string, org: OrganizationRow): Promise<OrganizationView> {
  const [view] = await viewsOf(q, realmId, [org]);
  return view as OrganizationView;
}

/** Slug and external id are unique per realm; a race past these checks meets the unique index. */
async function requireUnique(
  tx: Tx,
  realmId: string,
  o: { slug?: string; externalId?: string | null; self?: string },
) {
  if (o.slug !== undefined) {
    const other = await findOrganizationBySlug(tx, realmId, o.slug);
    if (other && other.id !== o.self) throw problem.conflict('the slug is taken by another organization');
  }
  if (o.externalId) {
    const other = await findOrganizationByExternalId(tx, realmId, o.externalId);
    if (other && other.id !== o.self)
      throw problem.conflict('the external_id is used by another organization');
  }
}

async function uniqueOr409<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isUniqueViolation(e)) throw problem.conflict('the slug, external_id or domain is already in use');
    throw e;
  }
}

export async function createOrganization(
  db: Db,
  call: OrgCall,
  input: CreateOrganizationInput,
): Promise<OrganizationView> {
  // The creator relation: the named owner, else the calling user (a service principal has none).
  const ownerId = input.ownerUserId ?? (call.actor.type === 'user' ? call.actor.id : null);
  return uniqueOr409(() =>
    inChange(db, call, async (tx, record) => {
      if (input.ownerUserId !== undefined)
        await requireUser(tx, call.realmId, input.ownerUserId, 'owner_user_id', true);
      await requireUnique(tx, call.realmId, { slug: input.slug, externalId: input.externalId ?? null });
      const org = await insertOrganization(
        tx,
        call.realmId,
        {
          id: newId('org', call.now.getTime()),
          slug: input.slug,
          displayName: input.displayName,
          locale: input.locale ?? null,
          timeZone: input.timeZone ?? null,
          metadata: input.metadata ?? {},
          contact: input.contact ?? null,
          externalId: input.externalId ?? null,
          policy: { ...DEFAULT_ORGANIZATION_POLICY, ...input.policy },
        },
        call.now,
      );
      await auditOrg(record, 'organization.created', org.id, {
        data: { slug: org.slug, owner_user_id: ownerId },
      });
      await record.event('organization.created', { organization_id: org.id, slug: org.slug }, org.id);
      if (ownerId !== null) {
        const m = await insertMembership(
          tx,
          call.realmId,
          { orgId: org.id, userId: ownerId, state: 'active', source: 'creator' },
          call.now,
        );
        await record.event(
          'organization.membership.added',
          { user_id: ownerId, membership_id: m.id, source: 'creator' },
          org.id,
        );
        await assignThroughMembership(tx, call, m, [await ownerRoleId(tx, call.realmId)], 'creator');
        await auditOrg(record, 'organization.membership.added', org.id, {
          subject: { type: 'user', id: ownerId },
          data: { membership_id: m.id, source: 'creator', role: 'owner' },
        });
        await authorizationChanged(tx, call.realmId, [{ type: 'user', id: ownerId }]);
      }
      return viewOf(tx, call.realmId, org);
    }),
  );
}

export async function readOrganization(db: Db, realmId: string, orgId: string): Promise<OrganizationView> {
  const org = await findOrganization(db, realmId, orgId);
  if (!org) throw problem.notFound('no such organization');
  return viewOf(db, realmId, org);
}

export async function listOrganizationPage(
  db: Db,
  realmId: string,
  q: { after: string | null; limit: number; state: string | null; slug: string | null },
): Promise<Page<OrganizationView>> {
  const page = cutPage(await listOrganizations(db, realmId, { ...q, limit: q.limit + 1 }), q.limit);
  return { items: await viewsOf(db, realmId, page.items), nextAfter: page.nextAfter };
}

/** If-Match with strong comparison (RFC 9110 section 13.1.1); `*` matches any current version. */
function ifMatchHolds(header: string | undefined, version: number): boolean {
  if (header === undefined) return true;
  const tags = header.split(',').map((t) => t.trim());
  return tags.includes('*') || tags.includes(`"${version}"`);
}

export async function updateOrganization(
  db: Db,
  call: OrgCall,
  orgId: string,
  input: PatchOrganizationInput,
  ifMatch: string | undefined,
): Promise<OrganizationView> {
  return uniqueOr409(() =>
    inChange(db, call, async (tx, record) => {
      const org = await requireOrganization(tx, call, orgId);
      if (!ifMatchHolds(ifMatch, org.version)) throw problem.preconditionFailed();
      requireChangeable(org);
      await requireUnique(tx, call.realmId, { externalId: input.externalId ?? null, self: org.id });
      const pick = <T>(given: T | undefined, current: T): T => (given === undefined ? current : given);
      const updated = await updateOrganizationSettings(
        tx,
        call.realmId,
        org.id,
        {
          displayName: pick(input.displayName, org.display_name),
          locale: pick(input.locale, org.locale),
          timeZone: pick(input.timeZone, org.time_zone),
          metadata: pick(input.metadata, org.metadata),
          contact: pick(input.contact, org.contact),
          externalId: pick(input.externalId, org.external_id),
          // Policy members merge one by one; the others keep their values.
          policy: { ...DEFAULT_ORGANIZATION_POLICY, ...org.policy, ...input.policy },
        },
        call.now,
      );
      await auditOrg(record, 'organization.updated', org.id, {
        data: { changed: Object.keys(input), version: updated.version },
      });
      // The organization's policy (MFA, SSO) shapes what its members' sign-ins need.
      if (input.policy !== undefined) await authorizationChanged(tx, call.realmId);
      return viewOf(tx, call.realmId, updated);
    }),
  );
}

// ---- domains ---------------------------------------------------------------------------------

export async function addDomain(db: Db, call: OrgCall, orgId: string, domain: string): Promise<DomainRow> {
  return uniqueOr409(() =>
    inChange(db, call, async (tx, record) => {
      const org = await requireOrganization(tx, call, orgId);
      requireChangeable(org);
      const taken = await findDomain(tx, call.realmId, domain);
      if (taken) {
        throw problem.conflict(
          taken.organization_id === org.id
            ? 'the organization has this domain already'
            : 'the domain belongs to another organization',
        );
      }
      const row = await insertDomain(tx, call.realmId, org.id, domain, call.now);
      await touchOrganization(tx, call.realmId, org.id, call.now);
      // doc 2, Catalog: domain changes emit no event; the audit record is their trace.
      await auditOrg(record, 'organization.domain.added', org.id, { data: { domain } });
      return row;
    }),
  );
}

export async function removeDomain(db: Db, call: OrgCall, orgId: string, domain: string): Promise<void> {
  await inChange(db, call, async (tx, record) => {
    const org = await requireOrganization(tx, call, orgId);
    requireChangeable(org);
    if (!(await deleteDomain(tx, call.realmId, org.id, domain))) throw problem.notFound('no such domain');
    await touchOrganization(tx, call.realmId, org.id, call.now);
    await auditOrg(record, 'organization.domain.removed', org.id, { data: { domain } });
  });
}
