-- Webhook subscriptions and their deliveries (spec doc 2, Webhook subscription; Webhook
-- subscription and delivery; Events: payload forms, fan-out and delivery semantics).

create table webhook_subscriptions (
  realm_id text not null references realms (id),
  id text not null,
  name text not null,
  destination_url text not null,
  -- Catalog names, or the single entry '*'.
  event_types jsonb not null,
  -- Realm-wide when null; fixed at creation.
  organization_id text,
  payload_form text not null default 'minimal' check (payload_form in ('minimal', 'standard')),
  event_version integer not null default 1 check (event_version in (1, 2)),
  allow_private_network boolean not null default false,
  state text not null default 'active' check (state in ('active', 'paused', 'disabled')),
  plugin_id text,
  owner_user_id text,
  -- whsec_ secrets sealed under the root key (purpose webhook-secret, bound to realm and id).
  secret_sealed text not null,
  -- The secret before the last rotation signs too until this time (24 hours).
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id)
);
create index webhook_subscriptions_active on webhook_subscriptions (realm_id) where state = 'active';

create table webhook_deliveries (
  realm_id text not null,
  id text not null,
  subscription_id text not null,
  event_id text not null,
  event_type text not null,
  event_version integer not null,
  -- The body exactly as rendered when the event fanned out; every attempt and replay sends it.
  body text not null,
  state text not null check (state in ('pending', 'retrying', 'delivered', 'dead_letter')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  -- The lease of the worker making the current attempt; a lapsed lease lets another retry it.
  locked_by text,
  locked_until timestamptz,
  last_attempt_at timestamptz,
  last_status integer,
  last_category text,
  last_failure_category text,
  delivered_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id),
  unique (realm_id, subscription_id, event_id),
  foreign key (realm_id, subscription_id) references webhook_subscriptions (realm_id, id) on delete cascade
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state in ('pending', 'retrying');
create index webhook_deliveries_of_subscription on webhook_deliveries (realm_id, subscription_id, id);
create index webhook_deliveries_created on webhook_deliveries (created_at);
