// Fan-out of committed events to subscriptions (spec doc 2, Payload forms and fan-out 2): every
// active subscription of the event's realm whose event_types hold the type or `*`, realm-wide or
// scoped to the event's organization. Paused and disabled subscriptions queue nothing. Each
// delivery stores its body as rendered now, so retries and replays send the same bytes.
import type { OutboxDestination, OutboxEvent } from '../events/index.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { insertDeliveries, type NewDelivery } from './deliveries.repo.ts';
import { activeSubscriptions, type SubscriptionRow } from './subscriptions.repo.ts';
import { renderEnvelope } from './webhook-envelope.ts';

export function subscriptionWants(s: SubscriptionRow, e: OutboxEvent): boolean {
  if (s.realm_id !== e.realmId || s.state !== 'active') return false;
  if (!s.event_types.includes('*') && !s.event_types.includes(e.type)) return false;
  if (s.organization_id === null) return true;
  if (s.organization_id !== e.orgId) return false;
  // The organization's own deletion disables its subscriptions; they do not hear of it.
  return e.type !== 'organization.deleted';
}

export const fanOutToWebhooks: OutboxDestination = async (tx: Tx, events, now) => {
  const realms = [...new Set(events.map((e) => e.realmId).filter((r) => r))];
  const subs = await activeSubscriptions(tx, realms);
  if (subs.length === 0) return;
  const queued: NewDelivery[] = [];
  for (const e of events) {
    for (const s of subs) {
      if (!subscriptionWants(s, e)) continue;
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
  }
  await insertDeliveries(tx, queued, now);
};
