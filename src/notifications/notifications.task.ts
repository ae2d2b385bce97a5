// Worker tasks of the notifications queue: notifications.send (every worker, each message under
// its own lease) and notifications.cleanup (payloads after delivery.payload_retention, rows after
// privacy.history_retention; spec doc 2, Data lifecycle and retention 3).
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { type NotificationDeps, NotificationSender } from './notification-sender.ts';
import { deleteOldNotifications, purgePayloads } from './notifications.repo.ts';

const CLEANUP_BATCH = 1000;

export function sendNotificationsTask<D extends NotificationDeps>(holder: string) {
  return (deps: D, _now: Date): Promise<TaskReport> => new NotificationSender(deps, holder).runOnce();
}

export interface NotificationCleanupDeps {
  db: Db;
  payloadRetentionMs: number;
  historyRetentionMs: number;
}

export async function cleanupNotifications(deps: NotificationCleanupDeps, now: Date): Promise<TaskReport> {
  const payloads = await purgePayloads(
    deps.db,
    new Date(now.getTime() - deps.payloadRetentionMs),
    now,
    CLEANUP_BATCH,
  );
  const rows = await deleteOldNotifications(
    deps.db,
    new Date(now.getTime() - deps.historyRetentionMs),
    CLEANUP_BATCH,
  );
  return { payloads_purged: payloads, rows_deleted: rows };
}
