// Worker task retention.cleanup (spec doc 2, Data lifecycle 1; docs/audit.md, Retention): every
// 5 minutes, up to 100 sealed batches, deleting the events whose every applicable retention
// passed. The rules are in audit/audit-retention.ts; this task gathers the realm and organization
// extensions and the active legal holds they need.
import {
  activeLegalHolds,
  extensionMs,
  isPrunable,
  type LegalHoldRow,
  pruneBatchEvents,
  pruneImportedAuditEvents,
  type RetentionSettings,
  retentionCandidates,
  retentionEvents,
  shortestRetentionMs,
} from '../audit/index.ts';
import type { TaskReport } from '../kernel/task.ts';
import { findOrganization } from '../organizations/index.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';

export const RETENTION_BATCHES_PER_RUN = 100;
/** Imported audit records deleted per run at most (spec doc 2, Data lifecycle 1). */
export const IMPORTED_RECORDS_PER_RUN = 1000;

export interface AuditRetentionDeps {
  db: Db;
  auditRetention: RetentionSettings;
  auditArchiveDir: string | null;
}

async function realmExtensionMs(q: Queryable, realmId: string): Promise<number> {
  try {
    return extensionMs(policyValue(await currentPolicy(q, realmId), 'audit', 'retention_days'));
  } catch {
    // A realm that no longer exists extends nothing.
    return 0;
  }
}

async function orgExtensionMs(q: Queryable, realmId: string, orgId: string): Promise<number> {
  const org = await findOrganization(q, realmId, orgId);
  return extensionMs(org?.policy?.audit_retention_days);
}

export async function cleanupAuditRetention(deps: AuditRetentionDeps, now: Date): Promise<TaskReport> {
  const settings = deps.auditRetention;
  const before = new Date(now.getTime() - shortestRetentionMs(settings));
  const batches = (
    await retentionCandidates(deps.db, before, deps.auditArchiveDir !== null, RETENTION_BATCHES_PER_RUN)
  ).rows;
  // Facts are read once per run and realm or organization.
  const realmExt = new Map<string, number>();
  const orgExt = new Map<string, number>();
  const holds = new Map<string, LegalHoldRow[]>();
  let deleted = 0;
  for (const b of batches) {
    const prunable: string[] = [];
    for (const e of (await retentionEvents(deps.db, b.id)).rows) {
      let realmMs = 0;
      let orgMs = 0;
      let realmHolds: LegalHoldRow[] = [];
      if (e.realm_id !== null) {
        if (!realmExt.has(e.realm_id)) {
          realmExt.set(e.realm_id, await realmExtensionMs(deps.db, e.realm_id));
          holds.set(e.realm_id, (await activeLegalHolds(deps.db, e.realm_id)).rows);
        }
        realmMs = realmExt.get(e.realm_id) ?? 0;
        realmHolds = holds.get(e.realm_id) ?? [];
        if (e.org_id !== null) {
          const key = `${e.realm_id}/${e.org_id}`;
          if (!orgExt.has(key)) orgExt.set(key, await orgExtensionMs(deps.db, e.realm_id, e.org_id));
          orgMs = orgExt.get(key) ?? 0;
        }
      }
      const facts = { settings, realmExtensionMs: realmMs, orgExtensionMs: orgMs, holds: realmHolds };
      if (isPrunable(e, facts, now)) prunable.push(e.id);
    }
    deleted += await deps.db.tx((tx) => pruneBatchEvents(tx, b.id, prunable, now));
  }
  // Imported history: its own category's retention, else the default, from the time of import;
  // holds and realm or organization extensions do not apply to records that are not our evidence.
  const importedKeepMs = settings.byCategoryMs.imported ?? settings.defaultMs;
  const imported = await deps.db.tx((tx) =>
    pruneImportedAuditEvents(tx, importedKeepMs, now, IMPORTED_RECORDS_PER_RUN),
  );
  return { batches: batches.length, deleted, imported_deleted: imported };
}
