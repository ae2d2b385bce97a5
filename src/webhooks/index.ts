// The webhooks context's public surface (docs/architecture.md, import rules): the fan-out the
// outbox dispatch hands events to, the delivery worker tasks, the backlog probe, and disabling an
// organization's subscriptions when the organization is deleted; and the egress and signing rules
// synchronous hooks share with webhooks (src/hooks).
export { oldestDueSeconds } from './deliveries.repo.ts';
export type { SubscriptionState } from './subscriptions.repo.ts';
export { disableOrganizationSubscriptions } from './subscriptions.repo.ts';
export {
  createSubscriptionInTx,
  removePluginSubscriptionsInTx,
  setSubscriptionStateInTx,
  validate as validateSubscriptionDestination,
  type WebhookDeps,
} from './subscriptions.service.ts';
export {
  cleanupDeliveries,
  deliverDue,
  deliverWebhooksTask,
  USER_AGENT,
  type WebhookDeliveryDeps,
} from './webhook-delivery.task.ts';
export {
  assertDestination,
  type DeliveryPolicy,
  guardFor,
  MAX_URL_CHARS,
  residencyProblem,
} from './webhook-destination.ts';
export { fanOutToWebhooks } from './webhook-fanout.ts';
export { newWebhookSecret, openSigningSecrets, signatureHeader } from './webhook-signature.ts';
export { decodeCreate as decodeCreateSubscription, type SubscriptionInput } from './webhooks.decode.ts';
