// Organizations, memberships and organization-scope roles seeded straight into the database, for
// tests of what depends on them (sign-in, tokens, decisions). Tests of the organization API itself
// create them through HTTP.

import { newId } from '../../src/platform/ids.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import { findRoleByName } from '../../src/roles/builtin-roles.repo.ts';
import type { Harness } from './harness.ts';

export interface OrgSeed {
  slug?: string;
  state?: 'active' | 'suspended' | 'archived' | 'deleting';
  policy?: { mfa_required?: boolean; require_sso?: boolean; audit_retention_days?: number };
}

export async function seedOrganization(h: Harness, realm: RealmRow, o: OrgSeed = {}): Promise<string> {
  const now = h.ctx.clock.now();
  const id = newId('org', now.getTime());
  const slug = o.slug ?? `org-${Math.random().toString(36).slice(2, 10)}`;
  await h.ctx.db.query(
    `insert into organizations (realm_id, id, slug, display_name, state, policy, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [realm.id, id, slug, slug, o.state ?? 'active', JSON.stringify(o.policy ?? {}), now],
  );
  return id;
}

export async function seedMembership(
  h: Harness,
  realm: RealmRow,
  orgId: string,
  userId: string,
  state: 'invited' | 'pending_approval' | 'active' | 'suspended' | 'expired' | 'removed' = 'active',
): Promise<string> {
  const now = h.ctx.clock.now();
  const id = newId('mem', now.getTime());
  await h.ctx.db.query(
    `insert into memberships (realm_id, id, organization_id, user_id, state, source, joined_at, created_at, updated_at)
     values ($1, $2, $3, $4, $5, 'test', $6, $6, $6)`,
    [realm.id, id, orgId, userId, state, now],
  );
  return id;
}

/** Assigns a role by name at organization scope (owner, admin, member or a realm-wide organization role). */
export async function seedOrgRole(
  h: Harness,
  realm: RealmRow,
  orgId: string,
  subject: { type: 'user' | 'service_principal' | 'group'; id: string },
  roleName: string,
): Promise<string> {
  const now = h.ctx.clock.now();
  const role = await findRoleByName(h.ctx.db, realm.id, roleName);
  if (!role) throw new Error(`no role ${roleName}`);
  const id = newId('ras', now.getTime());
  await h.ctx.db.query(
    `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source, created_at)
     values ($1, $2, $3, $4, $5, 'organization', $6, 'test', $7)`,
    [realm.id, id, role.id, subject.type, subject.id, orgId, now],
  );
  return id;
}
