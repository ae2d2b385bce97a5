// Fan-out of committed events to subscriptions (spec doc 2, Payload forms and fan-out 2): every
// subscription of the event's realm whose event_types hold the type or `*`, realm-wide or scoped
// to the event's organization, and that was active when the event committed. A subscription
// paused or disabled at that moment gets nothing, even if it is active again by the time the
// worker dispatches; one active then gets the event even if it is paused now (its delivery waits).
// The state at commit comes from the subscriptions' state log (migrations/0025,
// subscriptions.repo.ts statesAtCommit). Each delivery stores its body as rendered now, so retries
// and replays send the same bytes.
import type { OutboxDestination, OutboxEvent } from '../events/index.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { insertDeliveries, type NewDelivery } from './deliveries.repo.ts';
import {
  type EventForSubscription,
  type SubscriptionRow,
  statesAtCommit,
  subscriptionsOfRealms,
} from './subscriptions.repo.ts';
import { renderEnvelope } from './webhook-envelope.ts';

/** Whether the subscription asks for the event: its realm, its types, its organization. */
export function subscriptionWants(s: SubscriptionRow, e: OutboxEvent): boolean {
  if (s.realm_id !== e.realmId) return false;
  if (!s.event_types.includes('*') && !s.event_types.includes(e.type)) return false;
  if (s.organization_id === null) return true;
  if (s.organization_id !== e.orgId) return false;
  // The organization's own deletion disables its subscriptions; they do not hear of it.
  return e.type !== 'organization.deleted';
}

export const fanOutToWebhooks: OutboxDestination = async (tx: Tx, events, now) => {
  const realms = [...new Set(events.map((e) => e.realmId).filter((r) => r))];
  const subs = await subscriptionsOfRealms(tx, realms);
  if (subs.length === 0) return;
  const wanted: { e: OutboxEvent; s: SubscriptionRow }[] = [];
  for (const e of events) for (const s of subs) if (subscriptionWants(s, e)) wanted.push({ e, s });
  const pairs: EventForSubscription[] = wanted.map(({ e, s }) => ({
    realmId: e.realmId,
    subscriptionId: s.id,
    eventId: e.id,
    eventTx: e.txId,
  }));
  const stateAt = await statesAtCommit(tx, pairs);
  const queued: NewDelivery[] = [];
  for (const { e, s } of wanted) {
    if (stateAt.get(`${e.id} ${s.id}`) !== 'active') continue;
    queued.push({
      realmId: e.realmId,
      id: newId('whd', now.getTime()),
      subscriptionId: s.id,
      eventId: e.id,
      eventType: e.type,
      eventVersion: s.event_version,
      body: renderEnvelope(e, s.event_version, s.payload_form),
    });
  }
  await insertDeliveries(tx, queued, now);
};
