// Organization state (spec doc 2, Catalog: organization.suspended/.reactivated/.archived/.deleted;
// Organization deletion).
//
//   active    --suspend-->    suspended        grants bound to the organization are revoked
//   suspended --reactivate--> active
//   archived  --reactivate--> active
//   active | suspended --archive--> archived   grants bound to the organization are revoked
//   active | suspended | archived --DELETE--> deleting (202, a queued organization.delete job)
//   deleting  --DELETE--> deleting again, only when no deletion job is queued or running
//
// Anything else is a conflict. Tokens naming a non-active organization are already inactive at
// introspection; revoking the grants also stops refresh.

import type { AuditType } from '../audit/audit.types.ts';
import { inChange, type Recorder } from '../audit/index.ts';
import { addEvent } from '../events/index.ts';
import {
  eraseJobResultsOfOrganization,
  findLiveJobOfOrganization,
  queueJob,
  replayedJob,
} from '../jobs/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { disableOrganizationSubscriptions } from '../webhooks/index.ts';
import { decideRequest, lockPendingRequestsOfOrg } from './membership-requests.repo.ts';
import { requireOrganization } from './membership-rules.ts';
import { activeMemberIds, setMembershipState } from './memberships.repo.ts';
import { auditOrg } from './org-records.ts';
import { organizationDeleteJob } from './organization-delete.job.ts';
import { disableOrganizationProviders } from './organization-deletion.repo.ts';
import { revokeOrganizationGrants } from './organization-revocation.ts';
import type { OrganizationView } from './organizations.present.ts';
import {
  disableOwnedServicePrincipals,
  lockOrganization,
  revokeOwnedApiKeys,
  setOrganizationState,
  suspendOwnedProjects,
} from './organizations.repo.ts';
import { viewOf } from './organizations.service.ts';
import type { OrganizationRow, OrganizationState, OrgCall } from './organizations.types.ts';

export type OrganizationStateChange = 'suspend' | 'reactivate' | 'archive';

const TRANSITIONS: Record<
  OrganizationStateChange,
  { from: readonly OrganizationState[]; to: 'active' | 'suspended' | 'archived'; audit: AuditType }
> = {
  suspend: { from: ['active'], to: 'suspended', audit: 'organization.suspended' },
  reactivate: { from: ['suspended', 'archived'], to: 'active', audit: 'organization.reactivated' },
  archive: { from: ['active', 'suspended'], to: 'archived', audit: 'organization.archived' },
};

/** Members' permissions inside the organization follow its state. */
async function membersChanged(tx: Tx, call: Call, orgId: string): Promise<void> {
  const users = await activeMemberIds(tx, call.realmId, orgId);
  await authorizationChanged(
    tx,
    call.realmId,
    users.map((id) => ({ type: 'user' as const, id })),
  );
}

export async function changeOrganizationState(
  db: Db,
  call: OrgCall,
  orgId: string,
  change: OrganizationStateChange,
  reason: string | null,
): Promise<OrganizationView> {
  return inChange(db, call, async (tx, record) => {
    const updated = await changeOrganizationStateInTx(tx, record, call, orgId, change, reason);
    return viewOf(tx, call.realmId, updated);
  });
}

/** changeOrganizationState inside a change already open (an emergency control). */
export async function changeOrganizationStateInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  orgId: string,
  change: OrganizationStateChange,
  reason: string | null,
): Promise<OrganizationRow> {
  const rule = TRANSITIONS[change];
  const org = await lockOrganization(tx, call.realmId, orgId);
  if (!org) throw problem.notFound('no such organization');
  if (!rule.from.includes(org.state))
    throw problem.conflict(`cannot ${change} an organization that is ${org.state}`);
  const updated = await setOrganizationState(tx, call.realmId, org.id, rule.to, call.now);
  const revoked =
    rule.to === 'active'
      ? null
      : await revokeOrganizationGrants(tx, call.realmId, org.id, `organization_${rule.to}`, call.now);
  await membersChanged(tx, call, org.id);
  await auditOrg(record, rule.audit, org.id, {
    reason,
    data: { from: org.state, state: rule.to, ...(revoked ? { grants_revoked: revoked.grants } : {}) },
  });
  const data = { organization_id: org.id, state: rule.to };
  if (change === 'suspend') await record.event('organization.suspended', data, org.id);
  else if (change === 'reactivate') await record.event('organization.reactivated', data, org.id);
  else await record.event('organization.archived', data, org.id);
  return updated;
}

/**
 * The request transaction of doc 2, Organization deletion: the organization becomes deleting, its
 * grants end, pending invitations and join requests end, its service principals are disabled and
 * their API keys revoked, its projects suspended, job results are erased and an organization.delete
 * job is queued. A retry with the Idempotency-Key of an earlier request answers that request's job
 * again.
 */
export async function deleteOrganization(
  db: Db,
  call: OrgCall,
  orgId: string,
  idempotencyKey: string | null = null,
): Promise<{ state: 'deleting'; job_id: string }> {
  return inChange(db, call, async (tx, record) => {
    const request = {
      realmId: call.realmId,
      requester: call.actor,
      now: call.now,
      organizationId: orgId,
      idempotencyKey,
    };
    const replayed = await replayedJob(tx, organizationDeleteJob.name, request);
    if (replayed) return { state: 'deleting', job_id: replayed.id };
    const org = await requireOrganization(tx, call, orgId);
    if (
      org.state === 'deleting' &&
      (await findLiveJobOfOrganization(tx, call.realmId, org.id, organizationDeleteJob.name))
    )
      throw problem.conflict('a deletion job for the organization is queued or running');
    const { id: jobId } = await queueJob(tx, organizationDeleteJob, request);
    await setOrganizationState(tx, call.realmId, org.id, 'deleting', call.now, jobId);
    const revoked = await revokeOrganizationGrants(
      tx,
      call.realmId,
      org.id,
      'organization_deleted',
      call.now,
    );
    let requestsEnded = 0;
    for (const r of await lockPendingRequestsOfOrg(tx, call.realmId, org.id)) {
      await decideRequest(
        tx,
        call.realmId,
        r.id,
        r.kind === 'invitation' ? 'revoked' : 'denied',
        null,
        call.now,
      );
      await setMembershipState(
        tx,
        call.realmId,
        r.membership_id,
        { state: 'removed', endedReason: 'organization_deleted' },
        call.now,
      );
      requestsEnded++;
    }
    const principals = await disableOwnedServicePrincipals(tx, call.realmId, org.id, call.now);
    for (const id of principals) {
      // doc 2, Catalog: this event is never organization-scoped, even when the organization caused it.
      await addEvent(tx, {
        realmId: call.realmId,
        type: 'service_principal.state_changed',
        occurredAt: call.now,
        ...(call.correlationId === null ? {} : { correlationId: call.correlationId }),
        data: { service_principal_id: id, state: 'disabled' },
      });
    }
    const apiKeys = await revokeOwnedApiKeys(tx, call.realmId, org.id, call.now);
    for (const k of apiKeys)
      await record.audit('api_key.revoked', {
        category: 'security',
        target: { type: 'service_principal', id: k.service_principal_id },
        data: { api_key_id: k.id, reason: 'organization_deleted' },
      });
    const projects = await suspendOwnedProjects(tx, call.realmId, org.id, call.now);
    // doc 2, Payload forms and fan-out 2: its subscriptions stop here and never hear of the deletion.
    const webhooks = await disableOrganizationSubscriptions(tx, call.realmId, org.id, call.now);
    const providers = await disableOrganizationProviders(tx, call.realmId, org.id, call.now);
    await eraseJobResultsOfOrganization(tx, call.realmId, org.id, call.now);
    await membersChanged(tx, call, org.id);
    await authorizationChanged(
      tx,
      call.realmId,
      principals.map((id) => ({ type: 'service_principal' as const, id })),
    );
    await auditOrg(record, 'organization.deleted', org.id, {
      data: {
        from: org.state,
        job_id: jobId,
        grants_revoked: revoked.grants,
        requests_ended: requestsEnded,
        service_principals_disabled: principals.length,
        api_keys_revoked: apiKeys.length,
        projects_suspended: projects,
        webhooks_disabled: webhooks,
        identity_providers_disabled: providers,
      },
    });
    await record.event('organization.deleted', { organization_id: org.id }, org.id);
    return { state: 'deleting', job_id: jobId };
  });
}
