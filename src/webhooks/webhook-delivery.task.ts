// The webhooks.deliver worker task (spec doc 2, Delivery semantics 1-2; Authentication 4-5). Every
// worker runs it: a short transaction claims due deliveries under a lease (FOR UPDATE SKIP
// LOCKED), each is POSTed outside any transaction, and the attempt ends in a statement that holds
// only while this worker's lease is still the current one. Two workers therefore never make the
// same attempt, and a worker that dies mid-attempt leaves a lease that lapses: the delivery is
// attempted again, with the same event id and body (at least once).
import type { TaskReport } from '../kernel/task.ts';
import type { Clock } from '../platform/clock.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';
import type { OutboundHttp, OutboundResult } from '../platform/net/outbound-http.ts';
import {
  claimDueDeliveries,
  type DeliveryRow,
  deleteDeliveriesBefore,
  endAttempt,
  postponeDelivery,
} from './deliveries.repo.ts';
import {
  type AttemptCategory,
  afterAttempt,
  categoryOfStatus,
  MAX_RESPONSE_BYTES,
} from './delivery.states.ts';
import {
  findSubscription,
  pruneSubscriptionStates,
  purgeDeletedSubscriptions,
  type SubscriptionRow,
} from './subscriptions.repo.ts';
import { secretAad } from './subscriptions.service.ts';
import { type DeliveryPolicy, guardFor, residencyProblem } from './webhook-destination.ts';
import { openSigningSecrets, signatureHeader } from './webhook-signature.ts';

export const USER_AGENT = 'ProudAuth-Webhooks/1';
const CLAIM_BATCH = 20;
const PARALLEL = 8;
/** The lease outlives the attempt's deadline by this margin before another worker may retry it. */
const LEASE_MARGIN_MS = 30_000;
const PAUSED_RECHECK_MS = 60_000;

export interface WebhookDeliveryDeps {
  db: Db;
  keyring: RootKeyring;
  clock: Clock;
  outbound: OutboundHttp;
  policy: DeliveryPolicy;
  /** delivery.webhook_timeout */
  webhookTimeoutMs: number;
  /** delivery.webhook_max_attempts */
  webhookMaxAttempts: number;
  /** privacy.history_retention */
  historyRetentionMs: number;
  /** Counts each attempt in service_delivery_total{channel="webhook"}. */
  deliveryEnded?: (outcome: string) => void;
  log?: Logger;
}

/** Secrets that sign now: the current one, and the previous one during its 24 hours. */
export function signingSecrets(keyring: RootKeyring, s: SubscriptionRow, now: Date): string[] {
  if (s.secret_sealed === null) throw new Error('the subscription was deleted and has no secret');
  const sealed = {
    current: s.secret_sealed,
    previous: s.previous_secret_sealed,
    previousUntil: s.previous_secret_expires_at,
  };
  return openSigningSecrets(keyring, 'webhook-secret', sealed, secretAad(s.realm_id, s.id), now);
}

function categoryOf(r: OutboundResult): { category: AttemptCategory; status: number | null } {
  switch (r.kind) {
    case 'response':
      return { category: categoryOfStatus(r.status), status: r.status };
    case 'egress_denied':
      return { category: 'egress_denied', status: null };
    case 'timeout':
      return { category: 'timeout', status: null };
    default:
      return { category: 'network_error', status: null };
  }
}

/** One attempt of one claimed delivery; answers the state it ended in, or 'lease_lost'. */
export async function attemptDelivery(
  deps: WebhookDeliveryDeps,
  holder: string,
  d: DeliveryRow,
): Promise<string> {
  const sub = await findSubscription(deps.db, d.realm_id, d.subscription_id);
  const now = deps.clock.now();
  if (sub?.state !== 'active') {
    // Paused or disabled after the event was queued: no attempt is made or counted; the delivery
    // waits and goes out once the subscription is active again.
    const ok = await postponeDelivery(deps.db, d, holder, new Date(now.getTime() + PAUSED_RECHECK_MS));
    return ok ? 'postponed' : 'lease_lost';
  }
  const timestamp = Math.floor(now.getTime() / 1000);
  // Residency is re-checked before every attempt: the operator may have narrowed the list since
  // the subscription was registered.
  const outsideResidency = residencyProblem(sub.destination_url, deps.policy);
  const response: OutboundResult = outsideResidency
    ? { kind: 'egress_denied', reason: 'residency' }
    : await deps.outbound.post({
        url: sub.destination_url,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': d.event_id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(
            signingSecrets(deps.keyring, sub, now),
            d.event_id,
            timestamp,
            d.body,
          ),
        },
        body: d.body,
        guard: guardFor(deps.policy, sub.allow_private_network),
        timeoutMs: deps.webhookTimeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      });
  const result = categoryOf(response);
  const at = deps.clock.now();
  const end = afterAttempt(result.category, d.attempts, deps.webhookMaxAttempts, at);
  const ok = await endAttempt(deps.db, d, holder, {
    state: end.state,
    nextAttemptAt: end.nextAttemptAt,
    status: result.status,
    category: result.category,
    at,
  });
  const outcome = ok ? end.state : 'lease_lost';
  deps.deliveryEnded?.(outcome);
  return outcome;
}

async function failAttempt(deps: WebhookDeliveryDeps, holder: string, d: DeliveryRow): Promise<string> {
  const at = deps.clock.now();
  const end = afterAttempt('network_error', d.attempts, deps.webhookMaxAttempts, at);
  const ok = await endAttempt(deps.db, d, holder, {
    state: end.state,
    nextAttemptAt: end.nextAttemptAt,
    status: null,
    category: 'network_error',
    at,
  });
  const outcome = ok ? end.state : 'lease_lost';
  deps.deliveryEnded?.(outcome);
  return outcome;
}

/** Claims due deliveries and attempts them, a few at a time, until none is due or `max` ran. */
export async function deliverDue(
  deps: WebhookDeliveryDeps,
  holder: string,
  now: Date,
  max = CLAIM_BATCH,
): Promise<TaskReport> {
  const report: TaskReport = {};
  const leaseUntil = new Date(now.getTime() + deps.webhookTimeoutMs + LEASE_MARGIN_MS);
  const claimed = await deps.db.tx((tx) => claimDueDeliveries(tx, holder, now, leaseUntil, max));
  for (let i = 0; i < claimed.length; i += PARALLEL) {
    const ends = await Promise.all(
      claimed.slice(i, i + PARALLEL).map((d) =>
        attemptDelivery(deps, holder, d).catch(async (err: unknown) => {
          // E.g. a secret sealed under a root key version no longer configured. The attempt counts
          // as failed, so backoff and the dead letter still apply; nothing of the secret is logged.
          deps.log?.warn({ delivery: d.id, err: String(err) }, 'webhook attempt failed before it was sent');
          return failAttempt(deps, holder, d).catch(() => 'error');
        }),
      ),
    );
    for (const e of ends) report[e] = (report[e] ?? 0) + 1;
  }
  return report;
}

/** Batches one task run may take before it yields to the next tick (a backlog drains faster). */
const BATCHES_PER_RUN = 10;

export const deliverWebhooksTask =
  (holder: string) =>
  async (deps: WebhookDeliveryDeps, now: Date): Promise<TaskReport> => {
    const total: TaskReport = {};
    let at = now;
    for (let i = 0; i < BATCHES_PER_RUN; i++) {
      const report = await deliverDue(deps, holder, at);
      let n = 0;
      for (const [k, v] of Object.entries(report)) {
        total[k] = (total[k] ?? 0) + v;
        n += v;
      }
      if (n < CLAIM_BATCH) break;
      at = deps.clock.now();
    }
    return total;
  };

/**
 * privacy.history_retention after creation, deliveries and dead letters are deleted, and so are
 * subscriptions deleted that long ago (their deliveries are all older); logged subscription states
 * no waiting event needs go too.
 */
export async function cleanupDeliveries(deps: WebhookDeliveryDeps, now: Date): Promise<TaskReport> {
  const cutoff = new Date(now.getTime() - deps.historyRetentionMs);
  const deleted = await deleteDeliveriesBefore(deps.db, cutoff, 5000);
  const subscriptions = await purgeDeletedSubscriptions(deps.db, cutoff, 1000);
  return {
    deleted,
    subscriptions_purged: subscriptions,
    states_pruned: await pruneSubscriptionStates(deps.db),
  };
}
