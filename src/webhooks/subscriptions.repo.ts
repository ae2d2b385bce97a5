// SQL of webhook subscriptions. Every statement filters on the realm. A deleted subscription keeps
// its row (deleted_at set, secrets erased) while its delivery history is kept (migrations/0026);
// every statement here but the history reads and the final purge leaves such rows out.
import { deleteBatch, type Queryable } from '../platform/db/db.ts';
import type { EventVersion, PayloadForm } from './webhook-envelope.ts';

export type SubscriptionState = 'active' | 'paused' | 'disabled';

export interface SubscriptionRow {
  realm_id: string;
  id: string;
  name: string;
  destination_url: string;
  event_types: string[];
  organization_id: string | null;
  payload_form: PayloadForm;
  event_version: EventVersion;
  allow_private_network: boolean;
  state: SubscriptionState;
  plugin_id: string | null;
  owner_user_id: string | null;
  /** Null once the subscription is deleted. */
  secret_sealed: string | null;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  version: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface NewSubscription {
  id: string;
  name: string;
  destinationUrl: string;
  eventTypes: string[];
  organizationId: string | null;
  payloadForm: PayloadForm;
  eventVersion: EventVersion;
  allowPrivateNetwork: boolean;
  state: SubscriptionState;
  ownerUserId: string | null;
  secretSealed: string;
  pluginId?: string | null;
}

const parseTypes = (row: SubscriptionRow): SubscriptionRow => ({
  ...row,
  event_types:
    typeof row.event_types === 'string' ? (JSON.parse(row.event_types) as string[]) : row.event_types,
});

export async function insertSubscription(
  q: Queryable,
  realmId: string,
  s: NewSubscription,
  now: Date,
): Promise<SubscriptionRow> {
  const r = await q.query<SubscriptionRow>(
    `insert into webhook_subscriptions (realm_id, id, name, destination_url, event_types, organization_id,
       payload_form, event_version, allow_private_network, state, owner_user_id, secret_sealed, created_at, updated_at,
       plugin_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14) returning *`,
    [
      realmId,
      s.id,
      s.name,
      s.destinationUrl,
      JSON.stringify(s.eventTypes),
      s.organizationId,
      s.payloadForm,
      s.eventVersion,
      s.allowPrivateNetwork,
      s.state,
      s.ownerUserId,
      s.secretSealed,
      now,
      s.pluginId ?? null,
    ],
  );
  return parseTypes(r.rows[0]!);
}

/** The live subscriptions a plugin manages, locked for the change. */
export async function pluginSubscriptions(
  q: Queryable,
  realmId: string,
  pluginId: string,
): Promise<SubscriptionRow[]> {
  const r = await q.query<SubscriptionRow>(
    `select * from webhook_subscriptions where realm_id = $1 and plugin_id = $2 and deleted_at is null
      order by id for update`,
    [realmId, pluginId],
  );
  return r.rows.map(parseTypes);
}

/** A live subscription (or also a deleted one, for its delivery history). */
export async function findSubscription(
  q: Queryable,
  realmId: string,
  id: string,
  opts: { forUpdate?: boolean; includeDeleted?: boolean } = {},
): Promise<SubscriptionRow | null> {
  const r = await q.query<SubscriptionRow>(
    `select * from webhook_subscriptions where realm_id = $1 and id = $2
        ${opts.includeDeleted ? '' : 'and deleted_at is null'}${opts.forUpdate ? ' for update' : ''}`,
    [realmId, id],
  );
  return r.rows[0] ? parseTypes(r.rows[0]) : null;
}

export async function listSubscriptions(
  q: Queryable,
  realmId: string,
  after: string | null,
  limit: number,
): Promise<SubscriptionRow[]> {
  const r = await q.query<SubscriptionRow>(
    `select * from webhook_subscriptions where realm_id = $1 and deleted_at is null
        and ($2::text is null or id > $2)
      order by id limit $3`,
    [realmId, after, limit],
  );
  return r.rows.map(parseTypes);
}

export interface SubscriptionChanges {
  name: string;
  destinationUrl: string;
  eventTypes: string[];
  payloadForm: PayloadForm;
  eventVersion: EventVersion;
  allowPrivateNetwork: boolean;
  state: SubscriptionState;
}

/** Writes the changes if the row is still at `version`; null when another change came first. */
export async function updateSubscription(
  q: Queryable,
  realmId: string,
  id: string,
  version: number,
  c: SubscriptionChanges,
  now: Date,
): Promise<SubscriptionRow | null> {
  const r = await q.query<SubscriptionRow>(
    `update webhook_subscriptions set name = $4, destination_url = $5, event_types = $6, payload_form = $7,
       event_version = $8, allow_private_network = $9, state = $10, version = version + 1, updated_at = $11
      where realm_id = $1 and id = $2 and version = $3 and deleted_at is null returning *`,
    [
      realmId,
      id,
      version,
      c.name,
      c.destinationUrl,
      JSON.stringify(c.eventTypes),
      c.payloadForm,
      c.eventVersion,
      c.allowPrivateNetwork,
      c.state,
      now,
    ],
  );
  return r.rows[0] ? parseTypes(r.rows[0]) : null;
}

export async function rotateSubscriptionSecret(
  q: Queryable,
  realmId: string,
  id: string,
  version: number,
  sealed: string,
  previousSealed: string,
  previousExpiresAt: Date,
  now: Date,
): Promise<SubscriptionRow | null> {
  const r = await q.query<SubscriptionRow>(
    `update webhook_subscriptions set secret_sealed = $4, previous_secret_sealed = $5,
       previous_secret_expires_at = $6, version = version + 1, updated_at = $7
      where realm_id = $1 and id = $2 and version = $3 and deleted_at is null returning *`,
    [realmId, id, version, sealed, previousSealed, previousExpiresAt, now],
  );
  return r.rows[0] ? parseTypes(r.rows[0]) : null;
}

/**
 * Marks the subscription deleted and erases its secrets; its deliveries stay as history. False
 * when it was deleted already.
 */
export async function markSubscriptionDeleted(
  q: Queryable,
  realmId: string,
  id: string,
  now: Date,
): Promise<boolean> {
  const r = await q.query(
    `update webhook_subscriptions set deleted_at = $3, secret_sealed = null, previous_secret_sealed = null,
       previous_secret_expires_at = null, version = version + 1, updated_at = $3
      where realm_id = $1 and id = $2 and deleted_at is null`,
    [realmId, id, now],
  );
  return r.rowCount === 1;
}

/** Removes subscriptions deleted before `cutoff`, with what is left of their history (cascade). */
export const purgeDeletedSubscriptions = (q: Queryable, cutoff: Date, limit: number): Promise<number> =>
  deleteBatch(q, 'webhook_subscriptions', 'deleted_at < $1', cutoff, limit);

/** Subscriptions of these realms, whatever their state now, for fan-out (which asks the state then). */
export async function subscriptionsOfRealms(
  q: Queryable,
  realmIds: readonly string[],
): Promise<SubscriptionRow[]> {
  if (realmIds.length === 0) return [];
  const r = await q.query<SubscriptionRow>(
    'select * from webhook_subscriptions where realm_id = any($1::text[]) and deleted_at is null',
    [realmIds],
  );
  return r.rows.map(parseTypes);
}

/** One event and one subscription it may go to. */
export interface EventForSubscription {
  realmId: string;
  subscriptionId: string;
  eventId: string;
  /** The transaction that wrote the event (xid8 as text); null: the event predates the record. */
  eventTx: string | null;
}

/**
 * The state each subscription had when the event committed (migrations/0025): the newest state
 * logged by a transaction whose snapshot did not see the event's transaction (or by that very
 * transaction). A pair without one (the subscription came later) is left out. Answers
 * `eventId subscriptionId` -> state.
 */
export async function statesAtCommit(
  q: Queryable,
  pairs: readonly EventForSubscription[],
): Promise<Map<string, SubscriptionState>> {
  if (pairs.length === 0) return new Map();
  const r = await q.query<{ event_id: string; subscription_id: string; state: SubscriptionState }>(
    `select distinct on (p.event_id, p.subscription_id) p.event_id, p.subscription_id, h.state
       from unnest($1::text[], $2::text[], $3::text[], $4::xid8[]) as p(realm_id, subscription_id, event_id, tx)
       join webhook_subscription_states h on h.realm_id = p.realm_id and h.subscription_id = p.subscription_id
      where p.tx is null or h.tx_id = p.tx or not pg_visible_in_snapshot(p.tx, h.snapshot)
      order by p.event_id, p.subscription_id, h.seq desc`,
    [
      pairs.map((p) => p.realmId),
      pairs.map((p) => p.subscriptionId),
      pairs.map((p) => p.eventId),
      pairs.map((p) => p.eventTx),
    ],
  );
  return new Map(r.rows.map((row) => [`${row.event_id} ${row.subscription_id}`, row.state]));
}

/**
 * Drops logged states no event can need any more: those with a newer state whose snapshot sees no
 * event that is still waiting for dispatch (every such event then goes by that newer state).
 */
export async function pruneSubscriptionStates(q: Queryable): Promise<number> {
  const r = await q.query(
    `delete from webhook_subscription_states h
      where exists (
        select 1 from webhook_subscription_states n
         where n.realm_id = h.realm_id and n.subscription_id = h.subscription_id and n.seq > h.seq
           and not exists (
             select 1 from outbox o
              where o.realm_id = n.realm_id and o.dispatched_at is null and o.tx_id is not null
                and pg_visible_in_snapshot(o.tx_id, n.snapshot)))`,
  );
  return r.rowCount;
}

/** spec doc 2, Payload forms and fan-out 2: an organization being deleted loses its subscriptions. */
export async function disableOrganizationSubscriptions(
  q: Queryable,
  realmId: string,
  organizationId: string,
  now: Date,
): Promise<number> {
  const r = await q.query(
    `update webhook_subscriptions set state = 'disabled', version = version + 1, updated_at = $3
      where realm_id = $1 and organization_id = $2 and state <> 'disabled' and deleted_at is null`,
    [realmId, organizationId, now],
  );
  return r.rowCount;
}

/** Sets one subscription's state whatever its version (an emergency control); null when unknown. */
export async function forceSubscriptionState(
  q: Queryable,
  realmId: string,
  id: string,
  state: SubscriptionState,
  now: Date,
): Promise<{ before: SubscriptionState; row: SubscriptionRow } | null> {
  const before = await q.query<{ state: SubscriptionState }>(
    'select state from webhook_subscriptions where realm_id = $1 and id = $2 and deleted_at is null for update',
    [realmId, id],
  );
  const was = before.rows[0]?.state;
  if (was === undefined) return null;
  const r = await q.query<SubscriptionRow>(
    `update webhook_subscriptions set state = $3, version = version + case when state = $3 then 0 else 1 end,
       updated_at = case when state = $3 then updated_at else $4 end
      where realm_id = $1 and id = $2 returning *`,
    [realmId, id, state, now],
  );
  return { before: was, row: parseTypes(r.rows[0] as SubscriptionRow) };
}
