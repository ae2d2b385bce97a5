// The organization.delete job (spec doc 2, Organization deletion; Jobs and exports): queued by
// DELETE /organizations/{org} (organization-state.service.ts), run by the worker while its
// requester still holds org.delete in the organization (the runner re-checks it). Everything it
// removes, the tombstone and its evidence commit in the transaction that marks the job succeeded.
import type { Recorder } from '../audit/index.ts';
import type { Counts, JobType } from '../jobs/index.ts';
import { permanentFailure } from '../jobs/index.ts';
import type { Tx } from '../platform/db/db.ts';
import {
  deleteOrganizationAssignments,
  deleteOrganizationGroupMembers,
  deleteOrganizationProvisioningTargets,
  eraseOrganizationProviderSecrets,
  releaseOrganizationDomains,
  removeAllMemberships,
  revokeOwnedClientSecrets,
  tombstoneOrganization,
} from './organization-deletion.repo.ts';
import { lockOrganization } from './organizations.repo.ts';

async function completeDeletion(
  tx: Tx,
  record: Recorder,
  realmId: string,
  orgId: string,
  jobId: string,
  now: Date,
): Promise<Counts> {
  const org = await lockOrganization(tx, realmId, orgId);
  // Only the job the organization's latest DELETE queued finishes it; nothing is left otherwise.
  if (org?.state !== 'deleting' || org.deletion_job_id !== jobId) return { skipped: 1 };
  const counts: Counts = {
    role_assignments_deleted: await deleteOrganizationAssignments(tx, realmId, orgId),
    group_memberships_deleted: await deleteOrganizationGroupMembers(tx, realmId, orgId),
    domains_released: await releaseOrganizationDomains(tx, realmId, orgId),
    client_secrets_revoked: await revokeOwnedClientSecrets(tx, realmId, orgId, now),
    provider_secrets_erased: await eraseOrganizationProviderSecrets(tx, realmId, orgId, now),
    provisioning_targets_deleted: await deleteOrganizationProvisioningTargets(tx, realmId, orgId),
    memberships_removed: await removeAllMemberships(tx, realmId, orgId, now),
  };
  await tombstoneOrganization(tx, realmId, orgId, now);
  await record.audit('organization.deletion.completed', {
    category: 'configuration',
    orgId,
    target: { type: 'organization', id: orgId },
    data: { job_id: jobId, ...counts },
  });
  return counts;
}

export const organizationDeleteJob: JobType<unknown> = {
  name: 'organization.delete',
  permission: 'org.delete',
  runsWhileOrganizationDeleting: true,
  async run(_deps, job) {
    const orgId = job.organizationId;
    if (!orgId) return permanentFailure('the job names no organization');
    return {
      kind: 'apply',
      apply: (tx, record, now) => completeDeletion(tx, record, job.realmId, orgId, job.id, now),
    };
  },
};
