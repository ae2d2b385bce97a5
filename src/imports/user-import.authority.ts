// Who may run a user import (spec doc 2, Jobs and exports: the user.import row of the re-check
// table; Migration adapters rule 1): realm.users.import, plus realm.users.verification.override
// for trust_email_verification, realm.users.credentials.manage for import_totp and for records
// carrying update_password or configure_totp, realm.users.write for verify_email and
// verify_contact, and the delegation ceiling for every mapped role in its organization. Checked
// on the caller when the request arrives and on the requester again when the job runs.
import type { ImportDocument } from './user-import.format.ts';

export const IMPORT_PERMISSION = 'realm.users.import';

const ACTION_PERMISSION: Record<string, string> = {
  update_password: 'realm.users.credentials.manage',
  configure_totp: 'realm.users.credentials.manage',
  verify_email: 'realm.users.write',
  verify_contact: 'realm.users.write',
};

/** The realm permissions the document needs besides realm.users.import, sorted. */
export function documentPermissions(doc: ImportDocument): string[] {
  const out = new Set<string>();
  if (doc.trustEmailVerification === true) out.add('realm.users.verification.override');
  if (doc.importTotp === true) out.add('realm.users.credentials.manage');
  for (const u of doc.users)
    for (const a of u.requiredActions ?? []) {
      const p = ACTION_PERMISSION[a];
      if (p) out.add(p);
    }
  return [...out].sort();
}

/** What a holder holds: realm-wide or inside one organization. */
export interface Holding {
  permissions: ReadonlySet<string>;
  /** realm-admin at realm scope: may hand out any role. */
  everything: boolean;
}

export type AuthorityGap =
  | { kind: 'permission'; permission: string }
  | { kind: 'ceiling'; organizationId: string; permissions: string[] };

/**
 * The first thing the holder lacks, or null. `inOrganization` answers what it holds inside an
 * organization (realm scope included).
 */
export async function authorityGap(
  realm: Holding,
  needed: readonly string[],
  ceiling: ReadonlyMap<string, ReadonlySet<string>>,
  inOrganization: (orgId: string) => Promise<Holding>,
): Promise<AuthorityGap | null> {
  for (const p of [IMPORT_PERMISSION, ...needed])
    if (!realm.permissions.has(p)) return { kind: 'permission', permission: p };
  if (realm.everything) return null;
  for (const [orgId, granted] of ceiling) {
    const held = await inOrganization(orgId);
    if (held.everything) continue;
    const missing = [...granted].filter((p) => !held.permissions.has(p)).sort();
    if (missing.length > 0) return { kind: 'ceiling', organizationId: orgId, permissions: missing };
  }
  return null;
}

export function describeGap(gap: AuthorityGap): string {
  if (gap.kind === 'permission') return `permission ${gap.permission} is missing`;
  const shown = gap.permissions.slice(0, 10).join(', ') + (gap.permissions.length > 10 ? ', ...' : '');
  return `the mapped roles grant permissions in organization ${gap.organizationId} that the importer does not hold: ${shown}`;
}
