// The worker side of the notifications queue: claim a fair batch under a lease, send each message,
// and record the outcome only while the lease is still ours (a worker whose lease was taken over
// records nothing). A worker that dies mid-send leaves the row to be claimed again when its lease
// runs out, so delivery is at least once.
import type { Clock } from '../platform/clock.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import { afterFailure, backoffMs, overAttemptLimit, type RetryPolicy } from '../platform/work-queue/retry.ts';
import { payloadAad } from './enqueue.ts';
import {
  type Mailer,
  type MailMessage,
  PermanentDeliveryError,
  type SmsMessage,
  type SmsSender,
} from './mailer.ts';
import {
  claimNotifications,
  markFailed,
  markRetry,
  markSent,
  NOTIFICATION_QUEUE,
  type NotificationRow,
} from './notifications.repo.ts';

/** Retries: 10 s doubling, at most one hour; the 8th failed claim, crashed sends included, fails it. */
export const NOTIFICATION_RETRY: RetryPolicy = { firstMs: 10_000, capMs: 3_600_000, maxAttempts: 8 };
/** Claims of one notification, crashed sends included, before it fails for good. */
export const MAX_NOTIFICATION_ATTEMPTS = NOTIFICATION_RETRY.maxAttempts;
/** How long a claim lasts before another worker may take the message over. */
export const NOTIFICATION_LEASE_MS = 60_000;
const BATCH = 100;

/** Wait before attempt n+1. */
export const notificationRetryDelayMs = (attempts: number): number => backoffMs(NOTIFICATION_RETRY, attempts);

export type DeliveryOutcome = 'sent' | 'retry' | 'failed' | 'lease_lost';

export interface NotificationDeps {
  db: Db;
  keyring: RootKeyring;
  clock: Clock;
  mailer: Mailer | null;
  sms: SmsSender | null;
  /** workers.tenant_batch_share */
  tenantBatchShare: number;
  /** Counts service_delivery_total{channel="notification",outcome}. */
  delivered?: (outcome: DeliveryOutcome) => void;
  log?: Logger;
}

export class NotificationSender {
  readonly #deps: NotificationDeps;
  readonly #holder: string;
  readonly #leaseMs: number;

  constructor(deps: NotificationDeps, holder: string, leaseMs = NOTIFICATION_LEASE_MS) {
    this.#deps = deps;
    this.#holder = holder;
    this.#leaseMs = leaseMs;
  }

  /** Claims one batch and sends it; answers how each message ended. */
  async runOnce(max = BATCH): Promise<Record<string, number>> {
    const { db, clock, tenantBatchShare } = this.#deps;
    const now = clock.now();
    const claimed = await db.tx((tx) =>
      claimNotifications(
        tx,
        this.#holder,
        now,
        new Date(now.getTime() + this.#leaseMs),
        max,
        tenantBatchShare,
      ),
    );
    const report: Record<string, number> = {};
    for (const row of claimed) {
      const outcome = await this.#deliver(row);
      this.#deps.delivered?.(outcome);
      report[outcome] = (report[outcome] ?? 0) + 1;
    }
    return report;
  }

  async #deliver(row: NotificationRow): Promise<DeliveryOutcome> {
    let error: string | null = null;
    let permanent = false;
    try {
      if (overAttemptLimit(NOTIFICATION_RETRY, row.attempts)) {
        permanent = true;
        error = `gave up after ${MAX_NOTIFICATION_ATTEMPTS} attempts`;
      } else if (!row.payload) {
        permanent = true;
        error = 'the payload was purged before delivery';
      } else {
        const message = JSON.parse(
          this.#deps.keyring
            .decrypt('mail-secret', row.payload.sealed, payloadAad(row.realm_id, row.id))
            .toString('utf8'),
        ) as MailMessage | SmsMessage;
        await this.#send(row.channel, message);
      }
    } catch (e) {
      permanent = e instanceof PermanentDeliveryError;
      error = (e as Error).message;
      // The message text, the recipient and the code never reach the log; the row id does.
      this.#deps.log?.warn(
        { notification_id: row.id, channel: row.channel, error },
        'notification not delivered',
      );
    }
    const now = this.#deps.clock.now();
    return this.#deps.db.tx(async (tx) => {
      const current = await NOTIFICATION_QUEUE.lockClaimed(tx, row, this.#holder);
      if (!current) return 'lease_lost' as const;
      if (error === null) {
        await markSent(tx, row.realm_id, row.id, now);
        return 'sent' as const;
      }
      const next = afterFailure(NOTIFICATION_RETRY, current.attempts, permanent, now);
      if (next.kind !== 'retry') {
        await markFailed(tx, row.realm_id, row.id, error, now);
        return 'failed' as const;
      }
      await markRetry(tx, row.realm_id, row.id, next.at, error, now);
      return 'retry' as const;
    });
  }

  async #send(channel: 'email' | 'sms', message: MailMessage | SmsMessage): Promise<void> {
    if (channel === 'email') {
      if (!this.#deps.mailer) throw new Error('no mail transport is configured (delivery.smtp_host)');
      await this.#deps.mailer.send(message as MailMessage);
      return;
    }
    if (!this.#deps.sms) throw new Error('no SMS adapter is configured (delivery.sms_url)');
    await this.#deps.sms.send(message as SmsMessage);
  }
}
