// What a user import would do with each record, read from the database (docs/migration.md, Per-record
// results): already_imported when its external id (source_system, source_id) names a live account,
// skipped_deleted when it names an erased one, failed when an identifier is taken or an organization
// or role is unknown, otherwise imported. Used by dry runs and, inside its transaction, by the job.
import { type ConnectionRow, findConnectionByRef, findLinkBySubject } from '../identity-providers/index.ts';
import { type ImportOrganization, orgRefKey, resolveImportOrganizations } from '../organizations/index.ts';
import type { Queryable } from '../platform/db/db.ts';
import { loadRoleGraph } from '../roles/index.ts';
import { ownerRoleId } from '../roles/owner-rule.ts';
import { expand, incompatiblePair, permissionsOfSet, type RoleGraph } from '../roles/role-graph.ts';
import { findExternalIds, identifierKey, sourceKeyOf, takenIdentifiers } from '../users/index.ts';
import { memberOf, type PreparedRecord } from './user-import.validate.ts';

export type RecordStatus = 'imported' | 'already_imported' | 'skipped_deleted' | 'failed';

export interface RecordError {
  member: string;
  code: string;
  detail: string;
}

export interface PlannedMembership {
  orgId: string;
  roleIds: string[];
}

/** A link to make: the connection found by its alias, the issuer taken from the connection. */
export interface PlannedLink {
  providerId: string;
  issuer: string;
  subject: string;
  email: string | null;
}

export interface RecordPlan {
  record: PreparedRecord;
  status: RecordStatus;
  /** The existing account (already_imported, skipped_deleted). */
  userId: string | null;
  errors: RecordError[];
  memberships: PlannedMembership[];
  links: PlannedLink[];
}

export interface ImportPlan {
  records: RecordPlan[];
  /** Permissions the mapped roles grant, per organization: the delegation ceiling to check. */
  ceiling: Map<string, Set<string>>;
}

export interface PlanOptions {
  allowOwnerRoles: boolean;
}

function planMemberships(
  r: PreparedRecord,
  orgs: Map<string, ImportOrganization>,
  graph: RoleGraph,
  ownerId: string,
  o: PlanOptions,
  errors: RecordError[],
): PlannedMembership[] {
  const out: PlannedMembership[] = [];
  const seen = new Set<string>();
  const fail = (member: string, code: string, detail: string) => {
    errors.push({ member, code, detail });
  };
  for (const [k, m] of r.memberships.entries()) {
    const by = m.ref.id !== undefined ? 'id' : m.ref.slug !== undefined ? 'slug' : 'external_id';
    const refMember = `memberships[${k}].organization_${by}`;
    const org = orgs.get(orgRefKey(m.ref));
    if (!org) {
      fail(refMember, 'unknown_organization', 'no such organization');
      continue;
    }
    if (org.state !== 'active') {
      fail(refMember, 'organization_not_active', `the organization is ${org.state}`);
      continue;
    }
    if (seen.has(org.id)) {
      fail(refMember, 'duplicate', 'a second membership of the same organization');
      continue;
    }
    seen.add(org.id);
    const roleIds: string[] = [];
    for (const [j, name] of m.roles.entries()) {
      const role = org.roles.get(name.toLowerCase());
      const member = `memberships[${k}].roles[${j}]`;
      if (!role) fail(member, 'unknown_role', `no organization role ${name}`);
      // Held directly or through a composite, the owner role needs the import's consent.
      else if (expand(graph, [role.id]).has(ownerId) && !o.allowOwnerRoles)
        fail(member, 'owner_role_not_allowed', 'owner roles need allow_owner_roles');
      else roleIds.push(role.id);
    }
    out.push({ orgId: org.id, roleIds });
  }
  return out;
}

/** The connections the records name, by lower-case alias (an id that happens to match is not an alias). */
async function connectionsByAlias(
  q: Queryable,
  realmId: string,
  records: readonly PreparedRecord[],
): Promise<Map<string, ConnectionRow>> {
  const out = new Map<string, ConnectionRow>();
  const aliases = new Set(records.flatMap((r) => r.links.map((l) => l.alias.toLowerCase())));
  for (const alias of aliases) {
    const c = await findConnectionByRef(q, realmId, alias);
    if (c && c.alias.toLowerCase() === alias) out.set(alias, c);
  }
  return out;
}

async function planLinks(
  q: Queryable,
  realmId: string,
  r: PreparedRecord,
  connections: Map<string, ConnectionRow>,
  errors: RecordError[],
): Promise<PlannedLink[]> {
  const out: PlannedLink[] = [];
  for (const [k, l] of r.links.entries()) {
    const c = connections.get(l.alias.toLowerCase());
    if (!c) {
      errors.push({
        member: `linked_identities[${k}].connection_alias`,
        code: 'unknown_connection',
        detail: `no identity-provider connection with alias ${l.alias} in this realm`,
      });
      continue;
    }
    if (await findLinkBySubject(q, realmId, c.id, c.issuer, l.subject)) {
      errors.push({
        member: `linked_identities[${k}].upstream_subject`,
        code: 'linked_identity_taken',
        detail: `this upstream subject of ${c.alias} already signs in another account`,
      });
      continue;
    }
    out.push({ providerId: c.id, issuer: c.issuer, subject: l.subject, email: l.email });
  }
  return out;
}

export async function planImport(
  q: Queryable,
  realmId: string,
  sourceSystem: string,
  records: readonly PreparedRecord[],
  o: PlanOptions,
): Promise<ImportPlan> {
  const known = new Map(
    (
      await findExternalIds(
        q,
        realmId,
        sourceSystem,
        records.map((r) => sourceKeyOf(r.sourceId)),
      )
    ).map((x) => [x.source_key, x]),
  );
  const fresh = records.filter((r) => !known.has(sourceKeyOf(r.sourceId)));
  const taken = await takenIdentifiers(
    q,
    realmId,
    fresh.flatMap((r) => r.identifiers),
  );
  const orgs = await resolveImportOrganizations(
    q,
    realmId,
    fresh.flatMap((r) => r.memberships.map((m) => m.ref)),
  );
  const graph = await loadRoleGraph(q, realmId);
  const ownerId = await ownerRoleId(q, realmId);
  const connections = await connectionsByAlias(q, realmId, fresh);
  const ceiling = new Map<string, Set<string>>();
  const plans: RecordPlan[] = [];
  for (const record of records) plans.push(await planRecord(record));
  return { records: plans, ceiling };

  async function planRecord(record: PreparedRecord): Promise<RecordPlan> {
    const existing = known.get(sourceKeyOf(record.sourceId));
    if (existing) {
      const deleted = existing.erased_at !== null || existing.state === 'deleted';
      return {
        record,
        status: deleted ? 'skipped_deleted' : 'already_imported',
        userId: existing.user_id,
        errors: [],
        memberships: [],
        links: [],
      };
    }
    const errors: RecordError[] = [];
    record.identifiers.forEach((i, j) => {
      if (taken.has(`${i.type}:${identifierKey(i.type, i.value)}`))
        errors.push({
          member: `identifiers[${j}].value`,
          code: 'identifier_taken',
          detail: `another account has this ${i.type}`,
        });
    });
    const memberships = planMemberships(record, orgs, graph, ownerId, o, errors);
    for (const m of memberships) {
      const granted = expand(graph, m.roleIds);
      const pair = incompatiblePair(graph, granted, granted);
      if (pair)
        errors.push({
          member: 'memberships',
          code: 'incompatible_roles',
          detail: `${pair.map((id) => graph.get(id)?.name ?? id).join(' and ')} cannot be held together`,
        });
    }
    const links = await planLinks(q, realmId, record, connections, errors);
    if (errors.length > 0)
      return { record, status: 'failed', userId: null, errors, memberships: [], links: [] };
    for (const m of memberships) {
      const perms = ceiling.get(m.orgId) ?? new Set<string>();
      for (const p of permissionsOfSet(graph, expand(graph, m.roleIds))) perms.add(p);
      ceiling.set(m.orgId, perms);
    }
    return { record, status: 'imported', userId: null, errors, memberships, links };
  }
}

/** A record's outcome as the API reports it (dry runs say would_import for imported). */
export function presentRecordPlan(p: RecordPlan, dryRun: boolean, userId: string | null = p.userId) {
  return {
    index: p.record.index,
    source_id: p.record.sourceId,
    status: dryRun && p.status === 'imported' ? 'would_import' : p.status,
    ...(userId ? { user_id: userId } : {}),
    ...(p.errors.length > 0
      ? {
          errors: p.errors.map((e) => ({
            member: memberOf(p.record.index, e.member),
            code: e.code,
            detail: e.detail,
          })),
        }
      : {}),
  };
}

export type PresentedRecord = ReturnType<typeof presentRecordPlan>;

export function countOutcomes(records: readonly PresentedRecord[]): Record<string, number> {
  const counts: Record<string, number> = {
    imported: 0,
    would_import: 0,
    already_imported: 0,
    skipped_deleted: 0,
    failed: 0,
  };
  for (const r of records) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}
