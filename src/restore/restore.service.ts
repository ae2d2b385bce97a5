// restore-begin and restore-reconcile (document 2, "Restore marker" and "Backup and restore"): the
// marker holds every worker and readiness back until one transaction has re-applied the shipped
// revocation log, ended the outstanding one-time proofs and cleared the marker, with its audit.
import { OPERATOR_ACTOR } from '../audit/audit.types.ts';
import { recordAudit } from '../audit/index.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { endOneTimeProofs } from './one-time-proofs.ts';
import { APPLY, lastOnlyKey } from './reconcile.repo.ts';
import { type KeyDeps, replaceCompromisedActiveKeys } from './replacement-keys.ts';
import { type LogRecord, RECORD_KINDS, type RecordKind } from './revocation-log.ts';

export interface MarkerStatus {
  marked: boolean;
  marked_at: string | null;
  marked_by: string | null;
}

export async function restoreStatus(q: Queryable): Promise<MarkerStatus> {
  const r = await q.query<{ marked_at: Date; marked_by: string | null }>(
    'select marked_at, marked_by from restore_marker',
  );
  const row = r.rows[0];
  return row
    ? { marked: true, marked_at: new Date(row.marked_at).toISOString(), marked_by: row.marked_by }
    : { marked: false, marked_at: null, marked_by: null };
}

/** Sets the marker; a second call keeps the first marker and writes no second audit record. */
export function beginRestore(
  db: Db,
  by: string,
  now: Date,
): Promise<MarkerStatus & { already_marked: boolean }> {
  return db.tx(async (tx) => {
    const r = await tx.query(
      'insert into restore_marker (singleton, marked_at, marked_by) values (true, $1, $2) on conflict do nothing',
      [now, by],
    );
    if (r.rowCount === 1)
      await recordAudit(
        tx,
        {
          realmId: null,
          type: 'operations.restore.begun',
          category: 'operations',
          actor: OPERATOR_ACTOR,
          data: { marked_by: by },
        },
        now,
      );
    return { ...(await restoreStatus(tx)), already_marked: r.rowCount === 0 };
  });
}

export interface ReconcileReport {
  applied: Record<RecordKind, number>;
  sessions_revoked: number;
  refresh_families_revoked: number;
  proofs_invalidated: Record<string, number | 'not_applicable'>;
  restore_marker_cleared: boolean;
}

/** Records to apply: for kinds whose states move both ways, only each subject's last record. */
function effective(log: readonly LogRecord[]): LogRecord[] {
  const last = new Map<string, LogRecord>();
  for (const l of log) {
    const key = lastOnlyKey(l);
    if (key !== null) last.set(key, l);
  }
  return log.filter((l) => {
    const key = lastOnlyKey(l);
    return key === null || last.get(key) === l;
  });
}

const kindOf = (l: LogRecord) => (l.kind === 'revocation' ? (l.record.target as string) : l.kind);

/** Every active session, refresh family and support grant, and every pending invitation, ended. */
async function invalidateAll(tx: Tx, now: Date): Promise<{ sessions: number; families: number }> {
  const sessions = await tx.query(
    `update sessions set revoked_at = $1, revoked_reason = 'restore' where revoked_at is null`,
    [now],
  );
  const families = await tx.query(
    `update refresh_families set revoked_at = $1, revoked_reason = 'restore' where revoked_at is null`,
    [now],
  );
  await tx.query(`update support_grants set state = 'revoked' where state = 'active'`);
  await tx.query(
    `update memberships set state = 'removed', ended_reason = 'restore', updated_at = $1 where state = 'invited'`,
    [now],
  );
  return { sessions: sessions.rowCount, families: families.rowCount };
}

/** 2^40: more positions than a deployment hands out between a backup and its restore. */
const SESSION_EVENT_SEQ_JUMP = 1_099_511_627_776;

/**
 * One transaction: the log re-applied in order, the proofs ended, optionally every session ended,
 * the marker cleared and audited. Any failure leaves the restored database as it was.
 */
export function reconcileRestore(
  db: Db,
  log: readonly LogRecord[],
  opts: { invalidateAllSessions: boolean; logLines: number },
  keys: KeyDeps,
  now: Date,
): Promise<ReconcileReport> {
  return db.tx(async (tx) => {
    const applied = Object.fromEntries(RECORD_KINDS.map((k) => [k, 0])) as Record<RecordKind, number>;
    let sessions = 0;
    let families = 0;
    const keyRealms = new Set<string>();
    // The restored session-event sequence starts again from the backup's: jump far past it, so the
    // events this reconciliation writes sort after every cursor a verifier held before the failure
    // (docs/resource-servers.md) and are read by it, not skipped.
    await tx.query(
      `select setval('session_events_seq', (select last_value from session_events_seq) + $1::bigint)`,
      [SESSION_EVENT_SEQ_JUMP],
    );
    for (const l of effective(log)) {
      const n = await APPLY[l.kind](tx, l, now);
      applied[l.kind] += n;
      if (l.kind === 'key_compromised' && n > 0 && l.record.kid !== undefined) keyRealms.add(l.realm_id);
      if (kindOf(l) === 'session') sessions += n;
      if (l.kind === 'refresh_family_revoked') families += n;
    }
    // Session-event cursors handed out before the failure must not be numbered again.
    const top = log.reduce((m, l) => Math.max(m, l.seq), 0);
    if (top > 0)
      await tx.query(
        `select setval('revocation_log_seq_seq', greatest($1::bigint, (select last_value from revocation_log_seq_seq)))`,
        [top],
      );
    const keysReplaced = await replaceCompromisedActiveKeys(tx, keys, keyRealms, now);
    const proofs = await endOneTimeProofs(tx, now);
    if (opts.invalidateAllSessions) {
      const all = await invalidateAll(tx, now);
      sessions += all.sessions;
      families += all.families;
    }
    const cleared = (await tx.query('delete from restore_marker')).rowCount > 0;
    const report: ReconcileReport = {
      applied,
      sessions_revoked: sessions,
      refresh_families_revoked: families,
      proofs_invalidated: proofs,
      restore_marker_cleared: cleared,
    };
    await recordAudit(
      tx,
      {
        realmId: null,
        type: 'operations.restore.reconciled',
        category: 'emergency',
        actor: OPERATOR_ACTOR,
        data: {
          ...report,
          log_records: opts.logLines,
          invalidate_all_sessions: opts.invalidateAllSessions,
          signing_keys_replaced: keysReplaced,
        },
      },
      now,
    );
    return report;
  });
}

/** Reads the log for export and audits the export in one transaction: no audit, no file. */
export function exportLog(
  db: Db,
  read: (tx: Tx) => Promise<LogRecord[]>,
  since: Date,
  now: Date,
): Promise<LogRecord[]> {
  return db.tx(async (tx) => {
    const records = await read(tx);
    await recordAudit(
      tx,
      {
        realmId: null,
        type: 'operations.revocation_log.exported',
        category: 'operations',
        actor: OPERATOR_ACTOR,
        data: { since: since.toISOString(), records: records.length },
      },
      now,
    );
    return records;
  });
}
