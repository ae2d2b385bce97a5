// Memberships that a user import brings (spec doc 2, Organization membership: "import" is one way a
// membership becomes active; Events: memberships from import jobs emit no event of their own).
// The import names organizations by id, slug or external id and roles by name; this file resolves
// them and writes the memberships of new accounts with their roles, each role assignment announced
// as join-request approvals announce theirs, each membership audited.
import { recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import { many, type Queryable, type Tx } from '../platform/db/db.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { insertMembership, insertMembershipAssignment } from './memberships.repo.ts';
import { auditOrg } from './org-records.ts';

/** How an import record names an organization: exactly one of the three. */
export interface OrgRef {
  id?: string;
  slug?: string;
  externalId?: string;
}

export const orgRefKey = (r: OrgRef): string =>
  r.id !== undefined
    ? `id:${r.id}`
    : r.slug !== undefined
      ? `slug:${r.slug.toLowerCase()}`
      : `ext:${r.externalId}`;

export interface ImportOrganization {
  id: string;
  slug: string;
  state: string;
  /** Organization roles that may be held in it, by lower-cased name. */
  roles: Map<string, { id: string; name: string }>;
}

/** The organizations the refs name (deleted ones are not found), keyed by orgRefKey. */
export async function resolveImportOrganizations(
  q: Queryable,
  realmId: string,
  refs: readonly OrgRef[],
): Promise<Map<string, ImportOrganization>> {
  const ids = refs.flatMap((r) => (r.id !== undefined ? [r.id] : []));
  const slugs = refs.flatMap((r) => (r.slug !== undefined ? [r.slug.toLowerCase()] : []));
  const externals = refs.flatMap((r) => (r.externalId !== undefined ? [r.externalId] : []));
  const out = new Map<string, ImportOrganization>();
  if (ids.length + slugs.length + externals.length === 0) return out;
  const orgs = await many<{ id: string; slug: string; state: string; external_id: string | null }>(
    q,
    `select id, slug, state, external_id from organizations
      where realm_id = $1 and state <> 'deleted'
        and (id = any($2::text[]) or lower(slug) = any($3::text[]) or external_id = any($4::text[]))`,
    [realmId, ids, slugs, externals],
  );
  const roles = await many<{ id: string; name: string; organization_id: string | null }>(
    q,
    `select id, name, organization_id from roles
      where realm_id = $1 and scope = 'organization' and project_id is null
        and (organization_id is null or organization_id = any($2::text[]))`,
    [realmId, orgs.map((o) => o.id)],
  );
  for (const o of orgs) {
    const own = new Map<string, { id: string; name: string }>();
    // A role of the organization's own shadows a realm-wide one of the same name.
    for (const r of [
      ...roles.filter((x) => x.organization_id === null),
      ...roles.filter((x) => x.organization_id === o.id),
    ])
      own.set(r.name.toLowerCase(), { id: r.id, name: r.name });
    const org = { id: o.id, slug: o.slug, state: o.state, roles: own };
    out.set(`id:${o.id}`, org);
    out.set(`slug:${o.slug.toLowerCase()}`, org);
    if (o.external_id !== null) out.set(`ext:${o.external_id}`, org);
  }
  return out;
}

export interface ImportedMembership {
  orgId: string;
  userId: string;
  roleIds: string[];
  externalId: string | null;
  metadata: Record<string, unknown>;
}

/**
 * Writes the memberships of newly imported accounts in the import's transaction: active, source
 * `import`, no organization.membership.added (doc 2, Events), the roles held through them.
 */
export async function insertImportedMemberships(
  tx: Tx,
  call: Call,
  memberships: readonly ImportedMembership[],
): Promise<void> {
  if (memberships.length === 0) return;
  const record = recorder(tx, call);
  for (const im of memberships) {
    const m = await insertMembership(
      tx,
      call.realmId,
      {
        orgId: im.orgId,
        userId: im.userId,
        state: 'active',
        source: 'import',
        externalId: im.externalId,
        metadata: im.metadata,
        expiresAt: null,
      },
      call.now,
    );
    for (const roleId of im.roleIds) {
      const assignmentId = await insertMembershipAssignment(
        tx,
        call.realmId,
        { orgId: im.orgId, membershipId: m.id, userId: im.userId, roleId, source: 'import' },
        call.now,
      );
      if (assignmentId !== null)
        await record.event(
          'authorization.role.assigned',
          { subject_id: im.userId, role_id: roleId, assignment_id: assignmentId },
          im.orgId,
        );
    }
    await auditOrg(record, 'organization.membership.added', im.orgId, {
      subject: { type: 'user', id: im.userId },
      data: { membership_id: m.id, source: 'import', role_ids: im.roleIds },
    });
  }
  await authorizationChanged(
    tx,
    call.realmId,
    [...new Set(memberships.map((m) => m.userId))].map((id) => ({ type: 'user' as const, id })),
  );
}
