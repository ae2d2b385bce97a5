// Use cases of webhook subscriptions (spec doc 2, Webhook subscription; Webhooks endpoints;
// Delivery semantics 3). Each change checks its rules, writes its row and its audit record in one
// transaction. Destinations are resolved before that transaction opens (no network I/O inside
// one), so the row's version read before resolving is what the write must still find: a change
// that committed in between makes this one fail 412.
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { cutPage, type Page } from '../platform/http/keyset.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { Resolver } from '../platform/net/outbound-http.ts';
import { findLiveOrganization } from '../roles/index.ts';
import {
  backlogOf,
  type DeliveryRow,
  findDelivery,
  lastFailureCategory,
  listDeliveries,
  requeueDelivery,
  retireQueuedDeliveries,
} from './deliveries.repo.ts';
import {
  findSubscription,
  forceSubscriptionState,
  insertSubscription,
  listSubscriptions,
  markSubscriptionDeleted,
  pluginSubscriptions,
  rotateSubscriptionSecret,
  type SubscriptionChanges,
  type SubscriptionRow,
  type SubscriptionState,
  updateSubscription,
} from './subscriptions.repo.ts';
import { assertDestination, type DeliveryPolicy } from './webhook-destination.ts';
import { newWebhookSecret } from './webhook-signature.ts';
import type { SubscriptionInput, SubscriptionPatch } from './webhooks.decode.ts';

/** A rotated secret keeps signing beside the new one this long (spec doc 2, Webhooks endpoints). */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export interface WebhookDeps {
  db: Db;
  keyring: RootKeyring | null;
  resolver: Resolver;
  policy: DeliveryPolicy;
}

/** The row binding of a sealed secret: a secret moved to another row does not open. */
export const secretAad = (realmId: string, id: string) => `${realmId}/${id}`;

function keyringOf(deps: WebhookDeps): RootKeyring {
  if (!deps.keyring) throw problem.unavailable('no root key is configured to seal webhook secrets');
  return deps.keyring;
}

const pluginManaged = () =>
  new Problem(409, 'conflict', 'this subscription is managed by a plugin and cannot be changed here');

const etagOf = (version: number) => `"${version}"`;

function ifMatchSatisfied(header: string | undefined, version: number): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  if (value === '*') return true;
  return value
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .includes(etagOf(version));
}

export { etagOf as subscriptionEtag };

/** A live subscription; `history` also finds a deleted one whose deliveries are still kept. */
async function requireSubscription(
  deps: WebhookDeps,
  realmId: string,
  id: string,
  history = false,
): Promise<SubscriptionRow> {
  const row = id.includes('\0')
    ? null
    : await findSubscription(deps.db, realmId, id, { includeDeleted: history });
  if (!row) throw problem.notFound('no such webhook subscription');
  return row;
}

/** The rules of the whole subscription, checked at creation and on every change beyond state. */
export const validate = (
  deps: WebhookDeps,
  s: Pick<SubscriptionInput, 'destinationUrl' | 'allowPrivateNetwork'>,
) => assertDestination(deps, s.destinationUrl, s.allowPrivateNetwork, 'destination_url');

export interface CreatedSubscription {
  row: SubscriptionRow;
  secret: string;
}

/** Creates a subscription inside a change already open; the caller has checked its destination. */
export async function createSubscriptionInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  keyring: RootKeyring,
  input: SubscriptionInput,
  pluginId: string | null,
): Promise<CreatedSubscription> {
  if (input.organizationId && !(await findLiveOrganization(tx, call.realmId, input.organizationId)))
    throw problem.validation([
      { field: 'organization_id', code: 'not_found', detail: 'no such organization' },
    ]);
  const id = newId('whk', call.now.getTime());
  const secret = newWebhookSecret();
  const row = await insertSubscription(
    tx,
    call.realmId,
    {
      id,
      name: input.name,
      destinationUrl: input.destinationUrl,
      eventTypes: input.eventTypes,
      organizationId: input.organizationId,
      payloadForm: input.payloadForm,
      eventVersion: input.eventVersion,
      allowPrivateNetwork: input.allowPrivateNetwork,
      state: input.state,
      ownerUserId: call.actor.type === 'user' ? call.actor.id : null,
      secretSealed: keyring.encrypt('webhook-secret', secret, secretAad(call.realmId, id)),
      pluginId,
    },
    call.now,
  );
  await record.audit('webhook.created', {
    category: 'configuration',
    target: { type: 'webhook', id },
    ...(input.organizationId ? { orgId: input.organizationId } : {}),
    data: {
      event_types: input.eventTypes,
      allow_private_network: input.allowPrivateNetwork,
      event_version: input.eventVersion,
      ...(pluginId ? { plugin_id: pluginId } : {}),
    },
  });
  return { row, secret };
}

export async function createSubscription(
  deps: WebhookDeps,
  call: Call,
  input: SubscriptionInput,
): Promise<CreatedSubscription> {
  const keyring = keyringOf(deps);
  await validate(deps, input);
  return inChange(deps.db, call, (tx, record) =>
    createSubscriptionInTx(tx, record, call, keyring, input, null),
  );
}

/** Deletes the subscriptions a plugin manages inside a change already open; answers how many. */
export async function removePluginSubscriptionsInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  pluginId: string,
): Promise<number> {
  const rows = await pluginSubscriptions(tx, call.realmId, pluginId);
  for (const row of rows) {
    await markSubscriptionDeleted(tx, call.realmId, row.id, call.now);
    await retireQueuedDeliveries(tx, call.realmId, row.id);
    await record.audit('webhook.deleted', {
      category: 'configuration',
      target: { type: 'webhook', id: row.id },
      ...(row.organization_id ? { orgId: row.organization_id } : {}),
      data: { plugin_id: pluginId },
    });
  }
  return rows.length;
}

export async function getSubscription(
  deps: WebhookDeps,
  realmId: string,
  id: string,
): Promise<SubscriptionRow> {
  return requireSubscription(deps, realmId, id);
}

export async function listSubscriptionPage(
  deps: WebhookDeps,
  realmId: string,
  after: string | null,
  limit: number,
): Promise<Page<SubscriptionRow>> {
  return cutPage(await listSubscriptions(deps.db, realmId, after, limit + 1), limit);
}

export async function patchSubscription(
  deps: WebhookDeps,
  call: Call,
  id: string,
  patch: SubscriptionPatch,
  ifMatch: string | undefined,
): Promise<SubscriptionRow> {
  const before = await requireSubscription(deps, call.realmId, id);
  if (before.plugin_id) throw pluginManaged();
  if (!ifMatchSatisfied(ifMatch, before.version)) throw problem.preconditionFailed();
  const next: SubscriptionChanges = {
    name: patch.name ?? before.name,
    destinationUrl: patch.destinationUrl ?? before.destination_url,
    eventTypes: patch.eventTypes ?? before.event_types,
    payloadForm: patch.payloadForm ?? before.payload_form,
    eventVersion: patch.eventVersion ?? before.event_version,
    allowPrivateNetwork: patch.allowPrivateNetwork ?? before.allow_private_network,
    state: patch.state ?? before.state,
  };
  // A change of state alone keeps the destination as it is; anything else re-validates the whole.
  const beyondState = Object.keys(patch).some((k) => k !== 'state');
  if (beyondState) await validate(deps, next);
  return inChange(deps.db, call, async (tx, record) => {
    const row = await updateSubscription(tx, call.realmId, id, before.version, next, call.now);
    if (!row) {
      if (!(await findSubscription(tx, call.realmId, id)))
        throw problem.notFound('no such webhook subscription');
      throw problem.preconditionFailed('the subscription changed while this update was checked');
    }
    await record.audit('webhook.updated', {
      category: 'configuration',
      target: { type: 'webhook', id },
      ...(row.organization_id ? { orgId: row.organization_id } : {}),
      data: { changed: Object.keys(patch).sort(), state: row.state },
    });
    return row;
  });
}

export async function removeSubscription(
  deps: WebhookDeps,
  call: Call,
  id: string,
  ifMatch: string | undefined,
): Promise<void> {
  const before = await requireSubscription(deps, call.realmId, id);
  if (before.plugin_id) throw pluginManaged();
  if (!ifMatchSatisfied(ifMatch, before.version)) throw problem.preconditionFailed();
  await inChange(deps.db, call, async (tx, record) => {
    const row = await findSubscription(tx, call.realmId, id, { forUpdate: true });
    if (!row) throw problem.notFound('no such webhook subscription');
    if (row.version !== before.version) throw problem.preconditionFailed();
    // The history stays for privacy.history_retention (document 2, Delivery semantics 4); nothing
    // more is sent, so what was still queued ends as a dead letter.
    await markSubscriptionDeleted(tx, call.realmId, id, call.now);
    await retireQueuedDeliveries(tx, call.realmId, id);
    await record.audit('webhook.deleted', {
      category: 'configuration',
      target: { type: 'webhook', id },
      ...(row.organization_id ? { orgId: row.organization_id } : {}),
    });
  });
}

export interface RotatedSecret {
  row: SubscriptionRow;
  secret: string;
}

export async function rotateSecret(deps: WebhookDeps, call: Call, id: string): Promise<RotatedSecret> {
  const keyring = keyringOf(deps);
  const secret = newWebhookSecret();
  return inChange(deps.db, call, async (tx, record) => {
    const before = await findSubscription(tx, call.realmId, id, { forUpdate: true });
    if (!before?.secret_sealed) throw problem.notFound('no such webhook subscription');
    if (before.plugin_id) throw pluginManaged();
    const aad = secretAad(call.realmId, id);
    const row = await rotateSubscriptionSecret(
      tx,
      call.realmId,
      id,
      before.version,
      keyring.encrypt('webhook-secret', secret, aad),
      before.secret_sealed,
      new Date(call.now.getTime() + ROTATION_OVERLAP_MS),
      call.now,
    );
    if (!row) throw problem.preconditionFailed();
    await record.audit('webhook.secret_rotated', {
      category: 'configuration',
      target: { type: 'webhook', id },
      ...(row.organization_id ? { orgId: row.organization_id } : {}),
    });
    return { row, secret };
  });
}

export async function listDeliveryPage(
  deps: WebhookDeps,
  realmId: string,
  subscriptionId: string,
  before: string | null,
  limit: number,
): Promise<Page<DeliveryRow>> {
  await requireSubscription(deps, realmId, subscriptionId, true);
  return cutPage(await listDeliveries(deps.db, realmId, subscriptionId, before, limit + 1), limit);
}

export async function replayDelivery(
  deps: WebhookDeps,
  call: Call,
  subscriptionId: string,
  deliveryId: string,
): Promise<DeliveryRow> {
  const sub = await requireSubscription(deps, call.realmId, subscriptionId, true);
  if (sub.deleted_at)
    throw problem.conflict('the subscription was deleted; its deliveries are kept as history only');
  return inChange(deps.db, call, async (tx, record) => {
    const d = deliveryId.includes('\0')
      ? null
      : await findDelivery(tx, call.realmId, subscriptionId, deliveryId);
    if (!d) throw problem.notFound('no such delivery');
    const row = await requeueDelivery(tx, call.realmId, d.id, call.now);
    if (!row) throw problem.conflict('the delivery is still queued; only finished deliveries are replayed');
    await record.audit('webhook.delivery.replayed', {
      category: 'operations',
      target: { type: 'webhook', id: sub.id },
      ...(sub.organization_id ? { orgId: sub.organization_id } : {}),
      data: { delivery_id: d.id, event_id: d.event_id },
    });
    return row;
  });
}

export interface Backlog {
  pending: number;
  retrying: number;
  dead_letter: number;
  delivered: number;
  oldest_due_seconds: number;
  last_delivered_at: string | null;
  last_failure_category: string | null;
}

export async function backlog(deps: WebhookDeps, realmId: string, id: string, now: Date): Promise<Backlog> {
  await requireSubscription(deps, realmId, id, true);
  const b = await backlogOf(deps.db, realmId, id, now);
  return {
    pending: Number(b.pending),
    retrying: Number(b.retrying),
    dead_letter: Number(b.dead_letter),
    delivered: Number(b.delivered),
    oldest_due_seconds: b.oldest_due
      ? Math.max(0, Math.floor((now.getTime() - new Date(b.oldest_due).getTime()) / 1000))
      : 0,
    last_delivered_at: b.last_delivered_at ? new Date(b.last_delivered_at).toISOString() : null,
    last_failure_category: await lastFailureCategory(deps.db, realmId, id),
  };
}

/**
 * Sets a subscription's state inside a change already open (an emergency control): plugin-managed
 * subscriptions too, and without If-Match. A paused or disabled subscription gets no new
 * deliveries and its queued ones wait (webhook-delivery.task.ts). Answers the state before.
 */
export async function setSubscriptionStateInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  id: string,
  state: SubscriptionState,
): Promise<SubscriptionState> {
  const changed = await forceSubscriptionState(tx, call.realmId, id, state, call.now);
  if (!changed) throw problem.notFound('no such webhook subscription');
  if (changed.before !== state) {
    await record.audit('webhook.updated', {
      category: 'configuration',
      target: { type: 'webhook', id },
      ...(changed.row.organization_id ? { orgId: changed.row.organization_id } : {}),
      data: { changed: ['state'], state },
    });
  }
  return changed.before;
}
