// Reconciling what a directory.sync read from a target into the realm or organization
// (docs/provisioning.md, Pull): each remote user and group goes through the same SCIM use cases an
// inbound connector's requests do (scim/), with the target as the connector, so the accounts,
// their SCIM records, audit records and events are written exactly as for a pushed directory.
// Each resource commits on its own and the link (remote id -> local id, digest of the remote
// resource) with it, so a repeated run skips what is unchanged and finishes what a failed one left.
import { SYSTEM_ACTOR } from '../kernel/call.ts';
import type { Db } from '../platform/db/db.ts';
import { scimErrorOf } from '../scim/scim-error.ts';
import { decodeGroupResource } from '../scim/scim-group-resource.ts';
import { createScimGroup, deleteScimGroup, groupOf, replaceScimGroup } from '../scim/scim-groups.service.ts';
import { decodeUserResource } from '../scim/scim-user-resource.ts';
import { createScimUser, patchScimUser, replaceScimUser, type ScimCall } from '../scim/scim-users.service.ts';
import type { PasswordHasher } from '../users/index.ts';
import { findPulledGroup, findPulledUser } from './directory-sync.repo.ts';
import { deleteLink, type LinkKey, type LocalType, linksOf, upsertLink } from './provisioning-links.repo.ts';
import { digestOf, type Resource } from './push-plan.ts';

export interface ReconcileDeps {
  db: Db;
  hasher: PasswordHasher;
}

export interface SyncTarget {
  realm_id: string;
  id: string;
  organization_id: string | null;
}

export type SyncCounts = Record<string, number>;

/** The digest of a link whose remote user is gone from the directory and was deactivated here. */
const DEACTIVATED = 'deactivated';

/** What is not the resource itself: ids and metadata of the target, never stored here. */
function contentOf(r: Resource): Resource {
  const { id: _id, meta: _meta, groups: _groups, password: _password, ...rest } = r;
  return rest;
}

class Reconciler {
  readonly counts: SyncCounts = {};
  readonly #deps: ReconcileDeps;
  readonly #t: SyncTarget;
  readonly #call: ScimCall;

  constructor(deps: ReconcileDeps, t: SyncTarget, jobId: string, now: Date) {
    this.#deps = deps;
    this.#t = t;
    // The job acts as the system, its id the correlation id; the target is the connector.
    this.#call = {
      realmId: t.realm_id,
      actor: SYSTEM_ACTOR,
      correlationId: jobId,
      now,
      connectorId: t.id,
      organizationId: t.organization_id,
    };
  }

  #count(type: LocalType, what: string): void {
    const key = `${type}s_${what}`;
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }

  #key(type: LocalType, localId: string): LinkKey {
    return { realmId: this.#t.realm_id, targetId: this.#t.id, direction: 'pull', localType: type, localId };
  }

  async #link(type: LocalType, localId: string, remoteId: string, digest: string): Promise<void> {
    await upsertLink(this.#deps.db, this.#key(type, localId), remoteId, digest, this.#call.now);
  }

  /** Runs one resource's change; a SCIM refusal (bad value, taken name) counts as failed, the rest goes on. */
  async #each(type: LocalType, change: () => Promise<string>): Promise<void> {
    try {
      this.#count(type, await change());
    } catch (e) {
      if (!scimErrorOf(e)) throw e;
      this.#count(type, 'failed');
    }
  }

  /**
   * A local change after the directory dropped the resource; when the account or group is gone
   * here too, the link goes with it. Answers whether it was still here.
   */
  async #ifStillHere(type: LocalType, localId: string, change: () => Promise<unknown>): Promise<boolean> {
    try {
      await change();
      return true;
    } catch (e) {
      if (scimErrorOf(e)?.status !== 404) throw e;
      await deleteLink(this.#deps.db, this.#key(type, localId));
      return false;
    }
  }

  async users(remote: readonly Resource[]): Promise<Map<string, string>> {
    const links = new Map(
      (await linksOf(this.#deps.db, this.#t.realm_id, this.#t.id, 'pull', 'user')).map((l) => [
        l.remote_id,
        l,
      ]),
    );
    const localOf = new Map<string, string>();
    const seen = new Set<string>();
    for (const r of remote) {
      const remoteId = typeof r.id === 'string' ? r.id : null;
      if (remoteId === null || seen.has(remoteId)) continue;
      seen.add(remoteId);
      await this.#each('user', async () => {
        const content = contentOf(r);
        const digest = digestOf(content);
        // The remote id is the external id here: the directory is the source of the account.
        const input = { ...decodeUserResource(content), externalId: remoteId, password: null };
        const link = links.get(remoteId);
        if (link) {
          localOf.set(remoteId, link.local_id);
          if (link.pushed_digest === digest) return 'unchanged';
          try {
            await replaceScimUser(this.#deps.db, this.#call, link.local_id, input);
            await this.#link('user', link.local_id, remoteId, digest);
            return 'updated';
          } catch (e) {
            // Erased here while the directory still holds it: the directory provisions it again.
            if (scimErrorOf(e)?.status !== 404) throw e;
            await deleteLink(this.#deps.db, this.#key('user', link.local_id));
          }
        }
        // Made by an earlier run whose link was not written: adopted, not made twice.
        const earlier = await findPulledUser(this.#deps.db, this.#t.realm_id, this.#t.id, input.userName);
        const row = earlier
          ? await replaceScimUser(this.#deps.db, this.#call, earlier, input)
          : await createScimUser(this.#deps, this.#call, input);
        localOf.set(remoteId, row.user_id);
        await this.#link('user', row.user_id, remoteId, digest);
        return earlier ? 'updated' : 'created';
      });
    }
    // Gone from the directory: deactivated here, as a directory's own removal is first a suspension.
    // The link stays, marked, so the account remains the directory's: never pushed back to it, and
    // active again if the directory returns it.
    for (const [remoteId, link] of links) {
      if (seen.has(remoteId) || link.pushed_digest === DEACTIVATED) continue;
      await this.#each('user', async () => {
        const off = [{ op: 'replace' as const, path: 'active', value: false }];
        const here = await this.#ifStillHere('user', link.local_id, () =>
          patchScimUser(this.#deps.db, this.#call, link.local_id, off, ''),
        );
        if (here) await this.#link('user', link.local_id, remoteId, DEACTIVATED);
        return 'deactivated';
      });
    }
    return localOf;
  }

  async groups(remote: readonly Resource[], localUserOf: ReadonlyMap<string, string>): Promise<void> {
    const links = new Map(
      (await linksOf(this.#deps.db, this.#t.realm_id, this.#t.id, 'pull', 'group')).map((l) => [
        l.remote_id,
        l,
      ]),
    );
    const seen = new Set<string>();
    for (const r of remote) {
      const remoteId = typeof r.id === 'string' ? r.id : null;
      if (remoteId === null || seen.has(remoteId)) continue;
      seen.add(remoteId);
      await this.#each('group', async () => {
        const content = contentOf(r);
        const decoded = decodeGroupResource(content);
        // Members the sync knows: remote user ids become the local users they were linked to.
        const members = (decoded.members ?? []).flatMap((m) => localUserOf.get(m) ?? []).sort();
        const input = { ...decoded, externalId: remoteId, members };
        const digest = digestOf({ ...content, members });
        const link = links.get(remoteId);
        if (link?.pushed_digest === digest) return 'unchanged';
        const localId = link?.local_id ?? (await findPulledGroup(this.#deps.db, this.#t, remoteId));
        const g = localId
          ? await replaceScimGroup(
              this.#deps.db,
              this.#call,
              await groupOf(this.#deps.db, this.#call, localId),
              input,
            )
          : await createScimGroup(this.#deps.db, this.#call, input);
        await this.#link('group', g.id, remoteId, digest);
        return localId ? 'updated' : 'created';
      });
    }
    for (const [remoteId, link] of links) {
      if (seen.has(remoteId)) continue;
      await this.#each('group', async () => {
        if (
          await this.#ifStillHere('group', link.local_id, () =>
            deleteScimGroup(this.#deps.db, this.#call, link.local_id),
          )
        )
          await deleteLink(this.#deps.db, this.#key('group', link.local_id));
        return 'deleted';
      });
    }
  }
}

/** Users first, so group members can name the users they were linked to. */
export async function reconcileDirectory(
  deps: ReconcileDeps,
  target: SyncTarget,
  jobId: string,
  now: Date,
  remote: { users: readonly Resource[]; groups: readonly Resource[] },
): Promise<SyncCounts> {
  const r = new Reconciler(deps, target, jobId, now);
  const localUsers = await r.users(remote.users);
  await r.groups(remote.groups, localUsers);
  return r.counts;
}
