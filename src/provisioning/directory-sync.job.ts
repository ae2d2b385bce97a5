// The directory.sync job (spec doc 2, Job record: job types; docs/provisioning.md, Pull): queued by
// POST .../provisioning-targets/{id}/sync, run by a worker under the job queue's lease and tenant
// fairness. It reads the target's Users and Groups in SCIM pages of 200 (outside any transaction),
// then reconciles them here: created, updated, deactivated when gone from the directory.
import { authorityLost, type JobType, lostPermissionError, permanentFailure } from '../jobs/index.ts';
import { standingOf } from '../roles/index.ts';
import { type ReconcileDeps, reconcileDirectory } from './directory-reconcile.ts';
import { findTarget } from './provisioning-targets.repo.ts';
import { listAll, type PeerDeps, PeerUnavailable } from './scim-peer.ts';

/** Resources read per type and run: the SCIM examination limit (document 2, Limits: SCIM). */
export const MAX_PULLED = 20_000;

export type DirectorySyncDeps = PeerDeps &
  ReconcileDeps & {
    /** Told how each run's reconciliation counted (service_directory_sync_objects_total). */
    directorySynced?: (counts: Record<string, number>) => void;
  };

/** What the requester must still hold: the permission that manages the target's accounts. */
export const syncPermission = (organizationId: string | null): string =>
  organizationId === null ? 'realm.users.write' : 'org.members.write';

export const directorySyncJob: JobType<DirectorySyncDeps> = {
  name: 'directory.sync',
  // Realm or organization permission, by the target's scope: checked below.
  permission: null,
  async run(deps, job) {
    const targetId = typeof job.params.target_id === 'string' ? job.params.target_id : '';
    const target = await findTarget(deps.db, job.realmId, targetId);
    if (!target) return permanentFailure('the provisioning target was deleted');
    const need = syncPermission(target.organization_id);
    const standing = await standingOf(deps.db, job.realmId, job.requester, target.organization_id, job.now);
    if (!standing.everything && !standing.permissions.has(need))
      return authorityLost(lostPermissionError(need));
    let users: Record<string, unknown>[];
    let groups: Record<string, unknown>[];
    try {
      users = await listAll(deps, target, 'Users', MAX_PULLED);
      await job.progress('users', users.length);
      groups = await listAll(deps, target, 'Groups', MAX_PULLED);
      await job.progress('groups', groups.length);
    } catch (e) {
      if (!(e instanceof PeerUnavailable)) throw e;
      return { kind: 'failure', permanent: false, message: `the target could not be read (${e.reason})` };
    }
    const counts = await reconcileDirectory(deps, target, job.id, job.now, { users, groups });
    deps.directorySynced?.(counts);
    // Each resource committed with its own change; the job's end records the counts.
    return {
      kind: 'apply',
      apply: async () => ({ users_read: users.length, groups_read: groups.length, ...counts }),
    };
  },
};
