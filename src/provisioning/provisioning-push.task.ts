// The provisioning.push worker task (docs/provisioning.md, Push). Every worker runs it: a short
// transaction claims due targets under a lease (FOR UPDATE SKIP LOCKED, oldest due first), and
// each claimed target does one bounded slice of its sweep over the users, then the groups, of its
// scope, outside any transaction. For each resource the target is sent the one SCIM request
// (POST, PATCH or DELETE) that makes its copy match ours; the link (local id -> remote id, digest
// of what was accepted) is written only after the target accepted, so a crash repeats the request
// (at least once), and a repeated POST finds its earlier copy by userName or displayName (a 409,
// then a filter) instead of making a second one. A target that cannot be reached keeps its place
// and waits out an exponential backoff.
import type { TaskReport } from '../kernel/task.ts';
import type { Clock } from '../platform/clock.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import { backoffMs } from '../platform/work-queue/retry.ts';
import type { ClaimedItem } from '../platform/work-queue/work-queue.ts';
import {
  deleteLink,
  type LinkKey,
  type LocalType,
  orphanGroupLinks,
  pushGroupPage,
  pushUserPage,
  upsertLink,
} from './provisioning-links.repo.ts';
import { claimDueTargets, endPushRun, type PushRunEnd, type TargetRow } from './provisioning-targets.repo.ts';
import { desiredGroup, desiredUser, type PushStep, replaceAll, stepFor } from './push-plan.ts';
import { callPeer, findRemoteId, PEER_TIMEOUT_MS, type PeerDeps, PeerUnavailable } from './scim-peer.ts';

/** Resources one run of one target examines; the sweep goes on at the next run. */
export const PUSH_PAGE = 50;
const TARGETS_PER_RUN = 10;
/** After a whole pass, the next one starts this much later (changes without an event are seen then). */
export const PASS_INTERVAL_MS = 60_000;
const BACKOFF = { firstMs: 30_000, capMs: 3_600_000, jitter: 0.25 };
const LEASE_MS = PUSH_PAGE * PEER_TIMEOUT_MS + 60_000;

export type PushOutcome = 'accepted' | 'rejected' | 'unavailable';

export interface ProvisioningPushDeps extends PeerDeps {
  db: Db;
  clock: Clock;
  log?: Logger;
  /** Counts service_outbound_provisioning_operations_total{resource,operation,outcome}. */
  provisioningPushed?: (resource: LocalType, operation: string, outcome: PushOutcome) => void;
}

const RESOURCE = { user: 'Users', group: 'Groups' } as const;
const NAME_ATTRIBUTE = { user: 'userName', group: 'displayName' } as const;

const remoteIdOf = (body: Record<string, unknown> | null): string | null =>
  typeof body?.id === 'string' && body.id !== '' ? body.id : null;

interface Sweep {
  deps: ProvisioningPushDeps;
  target: TargetRow;
  report: TaskReport;
}

function count(s: Sweep, type: LocalType, step: PushStep['kind'], outcome: PushOutcome): void {
  s.deps.provisioningPushed?.(type, step, outcome);
  const key = outcome === 'accepted' ? `${type}_${step}d` : `${type}_${outcome}`;
  s.report[key] = (s.report[key] ?? 0) + 1;
}

/** Sends one step and records what the target accepted; a PeerUnavailable ends the run. */
async function send(s: Sweep, type: LocalType, localId: string, step: PushStep): Promise<void> {
  if (step.kind === 'none') return;
  const { deps, target } = s;
  const key: LinkKey = {
    realmId: target.realm_id,
    targetId: target.id,
    direction: 'push',
    localType: type,
    localId,
  };
  const path = `/${RESOURCE[type]}`;
  const now = () => deps.clock.now();
  if (step.kind === 'delete') {
    const r = await callPeer(deps, target, 'DELETE', `${path}/${encodeURIComponent(step.remoteId)}`);
    // Already gone at the target counts as done (a repeated DELETE after a crash).
    const ok = (r.status >= 200 && r.status < 300) || r.status === 404;
    if (ok) await deleteLink(deps.db, key);
    count(s, type, 'delete', ok ? 'accepted' : 'rejected');
    return;
  }
  if (step.kind === 'update') {
    const r = await callPeer(
      deps,
      target,
      'PATCH',
      `${path}/${encodeURIComponent(step.remoteId)}`,
      replaceAll(step.resource),
    );
    if (r.status >= 200 && r.status < 300) {
      await upsertLink(deps.db, key, step.remoteId, step.digest, now());
      count(s, type, 'update', 'accepted');
      return;
    }
    if (r.status !== 404) {
      count(s, type, 'update', 'rejected');
      return;
    }
    // Removed at the target behind our back: made again.
    await deleteLink(deps.db, key);
  }
  const created = await callPeer(deps, target, 'POST', path, step.resource);
  let remoteId = created.status === 201 || created.status === 200 ? remoteIdOf(created.body) : null;
  if (created.status === 409) {
    // It is there already (our own earlier POST whose answer was lost, or a copy made by hand):
    // adopted, then brought in line.
    const name = String(step.resource[NAME_ATTRIBUTE[type]]);
    remoteId = await findRemoteId(deps, target, RESOURCE[type], NAME_ATTRIBUTE[type], name);
    if (remoteId !== null) {
      const r = await callPeer(
        deps,
        target,
        'PATCH',
        `${path}/${encodeURIComponent(remoteId)}`,
        replaceAll(step.resource),
      );
      if (r.status < 200 || r.status >= 300) remoteId = null;
    }
  }
  if (remoteId === null) {
    count(s, type, 'create', 'rejected');
    return;
  }
  await upsertLink(deps.db, key, remoteId, step.digest, now());
  count(s, type, 'create', 'accepted');
}

/** One slice of the sweep; answers the cursor to resume from (null: the pass is complete). */
async function sweepSlice(s: Sweep): Promise<string | null> {
  const { deps, target } = s;
  const [phase, after = ''] = (target.push_cursor ?? 'user:').split(/:(.*)/s);
  const page = {
    realmId: target.realm_id,
    targetId: target.id,
    organizationId: target.organization_id,
    after,
    limit: PUSH_PAGE,
  };
  const nextAfter = (rows: readonly { id: string }[]) => {
    const last = rows.at(-1);
    return rows.length === PUSH_PAGE && last ? last.id : null;
  };
  if (phase === 'user') {
    const rows = await pushUserPage(deps.db, page);
    for (const u of rows) await send(s, 'user', u.id, stepFor(desiredUser(u), u));
    const more = nextAfter(rows);
    return more === null ? 'group:' : `user:${more}`;
  }
  if (after === '')
    for (const o of await orphanGroupLinks(deps.db, target.realm_id, target.id, PUSH_PAGE))
      await send(s, 'group', o.local_id, { kind: 'delete', remoteId: o.remote_id });
  const rows = await pushGroupPage(deps.db, page);
  for (const g of rows) await send(s, 'group', g.id, stepFor(desiredGroup(g), g));
  const more = nextAfter(rows);
  return more === null ? null : `group:${more}`;
}

async function pushTarget(
  deps: ProvisioningPushDeps,
  holder: string,
  target: TargetRow & ClaimedItem,
): Promise<TaskReport> {
  const s: Sweep = { deps, target, report: {} };
  let end: PushRunEnd;
  try {
    const next = await sweepSlice(s);
    const at = deps.clock.now();
    const dueAt = next === null ? new Date(at.getTime() + PASS_INTERVAL_MS) : at;
    end = { cursor: next, dueAt, failures: 0, error: null, pushedAt: at };
  } catch (e) {
    if (!(e instanceof PeerUnavailable))
      deps.log?.warn({ target: target.id, err: String(e) }, 'provisioning push failed');
    const phase: LocalType = (target.push_cursor ?? '').startsWith('group:') ? 'group' : 'user';
    deps.provisioningPushed?.(phase, 'request', 'unavailable');
    const failures = target.push_failures + 1;
    const dueAt = new Date(deps.clock.now().getTime() + backoffMs(BACKOFF, failures));
    const error = e instanceof PeerUnavailable ? e.reason : 'internal_error';
    // The place in the sweep is kept: what was accepted before the failure is linked already.
    end = { cursor: target.push_cursor, dueAt, failures, error, pushedAt: null };
    s.report.unavailable = (s.report.unavailable ?? 0) + 1;
  }
  await deps.db.tx((tx) => endPushRun(tx, target, holder, end));
  return s.report;
}

/** Claims due targets and runs one slice of each. */
export async function pushDue(deps: ProvisioningPushDeps, holder: string, now: Date): Promise<TaskReport> {
  const leaseUntil = new Date(now.getTime() + LEASE_MS);
  const claimed = await deps.db.tx((tx) => claimDueTargets(tx, holder, now, leaseUntil, TARGETS_PER_RUN));
  const total: TaskReport = { targets: claimed.length };
  for (const t of claimed) {
    const report = await pushTarget(deps, holder, t);
    for (const [k, v] of Object.entries(report)) total[k] = (total[k] ?? 0) + v;
  }
  return total;
}

export const pushProvisioningTask =
  (holder: string) =>
  (deps: ProvisioningPushDeps, now: Date): Promise<TaskReport> =>
    pushDue(deps, holder, now);
