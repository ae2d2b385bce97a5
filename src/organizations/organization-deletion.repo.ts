// The worker half of organization deletion (spec doc 2, Organization deletion): what the
// organization.delete job removes, each a set-wide statement inside the job's final transaction.
import type { Tx } from '../platform/db/db.ts';

/** Role assignments in the organization's scope, and every assignment of roles it owns. */
export async function deleteOrganizationAssignments(tx: Tx, realmId: string, orgId: string): Promise<number> {
  const r = await tx.query(
    `delete from role_assignments ra
      where ra.realm_id = $1
        and ((ra.scope_type = 'organization' and ra.scope_id = $2)
          or ra.role_id in (select id from roles where realm_id = $1 and organization_id = $2))`,
    [realmId, orgId],
  );
  return r.rowCount;
}

/** Members of the organization's groups (the groups stay, empty, with the tombstone). */
export async function deleteOrganizationGroupMembers(
  tx: Tx,
  realmId: string,
  orgId: string,
): Promise<number> {
  const r = await tx.query(
    `delete from group_members gm using groups g
      where gm.realm_id = $1 and g.realm_id = gm.realm_id and g.id = gm.group_id and g.organization_id = $2`,
    [realmId, orgId],
  );
  return r.rowCount;
}

/** The organization's domains, released so another organization may claim them. */
export async function releaseOrganizationDomains(tx: Tx, realmId: string, orgId: string): Promise<number> {
  const r = await tx.query('delete from organization_domains where realm_id = $1 and organization_id = $2', [
    realmId,
    orgId,
  ]);
  return r.rowCount;
}

/** Secrets of the clients behind the organization's service principals are revoked. */
export async function revokeOwnedClientSecrets(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<number> {
  const r = await tx.query(
    `update client_secrets set revoked_at = $3
      where realm_id = $1 and revoked_at is null and client_row_id in (
        select client_row_id from service_principals
         where realm_id = $1 and owner_organization_id = $2 and client_row_id is not null)`,
    [realmId, orgId, now],
  );
  return r.rowCount;
}

/** Every membership not yet ended is marked removed. */
export async function removeAllMemberships(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<number> {
  const r = await tx.query(
    `update memberships set state = 'removed', ended_reason = 'organization_deleted',
       authorization_revision = authorization_revision + 1, updated_at = $3
      where realm_id = $1 and organization_id = $2 and state not in ('removed', 'expired')`,
    [realmId, orgId, now],
  );
  return r.rowCount;
}

/** The tombstone: state deleted, its descriptive data cleared (id and slug remain for the record). */
export async function tombstoneOrganization(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<void> {
  await tx.query(
    `update organizations set state = 'deleted', metadata = '{}', contact = null, external_id = null,
       version = version + 1, updated_at = $3
      where realm_id = $1 and id = $2`,
    [realmId, orgId, now],
  );
}

// Identity providers sit above organizations (identity-providers/ uses this context), so the two
// statements deletion needs of their table are here (doc 2, Organization deletion).

/** The organization's identity-provider connections stop serving sign-ins at once. */
export async function disableOrganizationProviders(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<number> {
  const r = await tx.query(
    `update identity_providers set state = 'disabled', version = version + 1, updated_at = $3
      where realm_id = $1 and organization_id = $2 and state <> 'disabled'`,
    [realmId, orgId, now],
  );
  return r.rowCount;
}

/** Their client secrets are erased (sealed values and key references alike). */
export async function eraseOrganizationProviderSecrets(
  tx: Tx,
  realmId: string,
  orgId: string,
  now: Date,
): Promise<number> {
  const r = await tx.query(
    `update identity_providers set client_secret_sealed = null, client_secret_ref = null, version = version + 1,
            updated_at = $3
      where realm_id = $1 and organization_id = $2
        and (client_secret_sealed is not null or client_secret_ref is not null)`,
    [realmId, orgId, now],
  );
  return r.rowCount;
}

/**
 * The organization's outbound provisioning targets (migration 0057) go with their sealed
 * credentials and links; what they provisioned elsewhere stays there (docs/provisioning.md).
 */
export async function deleteOrganizationProvisioningTargets(
  tx: Tx,
  realmId: string,
  orgId: string,
): Promise<number> {
  const r = await tx.query('delete from provisioning_targets where realm_id = $1 and organization_id = $2', [
    realmId,
    orgId,
  ]);
  return r.rowCount;
}
