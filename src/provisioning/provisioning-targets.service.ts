// Provisioning targets (docs/provisioning.md): created, changed and deleted with their audit record
// in one transaction; the destination passes the webhook destination rules first (DNS before the
// transaction: docs/webhooks.md), and the bearer credential is sealed under the root key, never to
// be answered again. Queuing a directory.sync job is one more change of the same kind.
import { inChange } from '../audit/index.ts';
import { type QueuedJob, queueJob } from '../jobs/index.ts';
import type { Call } from '../kernel/call.ts';
import { findOrganization } from '../organizations/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { Resolver } from '../platform/net/outbound-http.ts';
import { assertDestination, type DeliveryPolicy } from '../webhooks/index.ts';
import { directorySyncJob } from './directory-sync.job.ts';
import {
  deleteTarget,
  findTarget,
  insertTarget,
  lockTarget,
  type TargetRow,
  updateTarget,
} from './provisioning-targets.repo.ts';
import { sealCredential } from './scim-peer.ts';

export interface ProvisioningDeps {
  db: Db;
  keyring: RootKeyring | null;
  resolver: Resolver;
  policy: DeliveryPolicy;
}

export interface TargetInput {
  name: string;
  baseUrl: string;
  bearerToken: string;
  allowPrivateNetwork: boolean;
  push: boolean;
}

export interface TargetPatch {
  name?: string;
  baseUrl?: string;
  bearerToken?: string;
  allowPrivateNetwork?: boolean;
  push?: boolean;
  state?: 'active' | 'paused';
}

function keyringOf(deps: ProvisioningDeps): RootKeyring {
  if (!deps.keyring) throw problem.unavailable('no root key is configured to seal credentials');
  return deps.keyring;
}

const notFound = () => problem.notFound('no such provisioning target');

/** The target of this scope (the realm's, or one organization's), or 404. */
export async function targetOf(
  db: Db | Tx,
  realmId: string,
  id: string,
  organizationId: string | null,
): Promise<TargetRow> {
  const t = await findTarget(db, realmId, id);
  if (!t || t.organization_id !== organizationId) throw notFound();
  return t;
}

async function lockedTarget(
  tx: Tx,
  call: Call,
  id: string,
  organizationId: string | null,
): Promise<TargetRow> {
  const t = await lockTarget(tx, call.realmId, id);
  if (!t || t.organization_id !== organizationId) throw notFound();
  return t;
}

const auditAbout = (id: string, organizationId: string | null, data: Record<string, unknown>) => ({
  category: 'configuration' as const,
  target: { type: 'provisioning_target', id },
  ...(organizationId === null ? {} : { orgId: organizationId }),
  data,
});

export async function createTarget(
  deps: ProvisioningDeps,
  call: Call,
  input: TargetInput,
  organizationId: string | null,
): Promise<TargetRow> {
  const keyring = keyringOf(deps);
  await assertDestination(deps, input.baseUrl, input.allowPrivateNetwork, 'base_url');
  const id = newId('prt', call.now.getTime());
  return inChange(deps.db, call, async (tx, record) => {
    if (organizationId !== null) {
      const org = await findOrganization(tx, call.realmId, organizationId);
      if (!org) throw problem.notFound('no such organization');
      if (org.state !== 'active') throw problem.conflict('the organization is not active');
    }
    await insertTarget(
      tx,
      call.realmId,
      {
        id,
        organizationId,
        name: input.name,
        baseUrl: input.baseUrl,
        credentialSealed: sealCredential(keyring, call.realmId, id, input.bearerToken),
        allowPrivateNetwork: input.allowPrivateNetwork,
        pushEnabled: input.push,
      },
      call.now,
    );
    await record.audit(
      'provisioning_target.created',
      auditAbout(id, organizationId, { name: input.name, base_url: input.baseUrl, push: input.push }),
    );
    return (await findTarget(tx, call.realmId, id)) as TargetRow;
  });
}

/** A change of the destination or its credential is checked as a new one; name and state are not. */
export async function changeTarget(
  deps: ProvisioningDeps,
  call: Call,
  id: string,
  organizationId: string | null,
  patch: TargetPatch,
): Promise<TargetRow> {
  const before = await targetOf(deps.db, call.realmId, id, organizationId);
  const baseUrl = patch.baseUrl ?? before.base_url;
  const allowPrivateNetwork = patch.allowPrivateNetwork ?? before.allow_private_network;
  const redirected = patch.baseUrl !== undefined || patch.allowPrivateNetwork !== undefined;
  if (redirected) await assertDestination(deps, baseUrl, allowPrivateNetwork, 'base_url');
  const sealed =
    patch.bearerToken === undefined
      ? null
      : sealCredential(keyringOf(deps), call.realmId, id, patch.bearerToken);
  return inChange(deps.db, call, async (tx, record) => {
    const t = await lockedTarget(tx, call, id, organizationId);
    // A destination changed by someone else since it was checked is not this request's to keep.
    if (
      redirected &&
      (t.base_url !== before.base_url || t.allow_private_network !== before.allow_private_network)
    )
      throw problem.conflict('the target changed while this update was checked');
    await updateTarget(
      tx,
      call.realmId,
      id,
      {
        name: patch.name ?? t.name,
        baseUrl,
        credentialSealed: sealed ?? t.credential_sealed,
        allowPrivateNetwork,
        pushEnabled: patch.push ?? t.push_enabled,
        state: patch.state ?? t.state,
      },
      call.now,
    );
    const fields = Object.keys(patch).map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    await record.audit('provisioning_target.updated', auditAbout(id, organizationId, { fields }));
    return (await findTarget(tx, call.realmId, id)) as TargetRow;
  });
}

/** Deleting a target stops pushing and pulling; what it holds at the other side stays there. */
export async function removeTarget(
  deps: ProvisioningDeps,
  call: Call,
  id: string,
  organizationId: string | null,
) {
  await inChange(deps.db, call, async (tx, record) => {
    await lockedTarget(tx, call, id, organizationId);
    await deleteTarget(tx, call.realmId, id);
    await record.audit('provisioning_target.deleted', auditAbout(id, organizationId, {}));
  });
}

/** Queues a directory.sync of the target (an Idempotency-Key answers the job it queued before). */
export async function queueDirectorySync(
  deps: ProvisioningDeps,
  call: Call,
  id: string,
  organizationId: string | null,
  idempotencyKey: string | null,
): Promise<QueuedJob> {
  return inChange(deps.db, call, async (tx, record) => {
    const t = await lockedTarget(tx, call, id, organizationId);
    if (t.state !== 'active') throw problem.conflict('the provisioning target is paused');
    const job = await queueJob(tx, directorySyncJob, {
      realmId: call.realmId,
      requester: call.actor,
      now: call.now,
      organizationId,
      params: { target_id: id },
      idempotencyKey,
    });
    if (!job.replayed)
      await record.audit('directory.sync.requested', auditAbout(id, organizationId, { job_id: job.id }));
    return job;
  });
}
