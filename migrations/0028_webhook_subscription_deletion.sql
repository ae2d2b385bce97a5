-- A deleted webhook subscription keeps its deliveries and dead letters for
-- privacy.history_retention after their creation (document 2, Delivery semantics 4): the row stays,
-- marked deleted and without its secrets, hidden from the subscription API and from fan-out, until
-- webhooks.cleanup removes it (and, by cascade, what is left of its deliveries) after the retention.
alter table webhook_subscriptions add column deleted_at timestamptz;
alter table webhook_subscriptions alter column secret_sealed drop not null;
create index webhook_subscriptions_deleted on webhook_subscriptions (deleted_at) where deleted_at is not null;
