-- Which subscriptions an event goes to is decided by their state when the event committed, not when
-- the worker dispatches it (document 2, Webhook subscription and delivery: events published while a
-- subscription is paused or disabled are not queued for it).
--
-- Every event records the transaction that wrote it, and every state a subscription takes is
-- logged, by a trigger deferred to the commit of the transaction that set it, with the snapshot
-- taken there. An event's transaction is ordered after a state change exactly when that snapshot
-- does not see it (or both are one transaction): taken at the change's commit, the snapshot sees
-- every event that committed before and none that committed after, so only two commits in the
-- same instant can be ordered either way. The state at an event's commit is the newest logged
-- state whose snapshot does not see the event. Nothing is read or locked on the path that writes
-- events (src/webhooks/webhook-fanout.ts reads the log at dispatch).

-- Events written before this migration have no transaction id; they go by the current state.
alter table outbox add column tx_id xid8;
alter table outbox alter column tx_id set default pg_current_xact_id();

create table webhook_subscription_states (
  realm_id text not null,
  subscription_id text not null,
  seq bigint generated always as identity,
  state text not null,
  tx_id xid8 not null default pg_current_xact_id(),
  snapshot pg_snapshot not null default pg_current_snapshot(),
  changed_at timestamptz not null default now(),
  primary key (realm_id, subscription_id, seq),
  foreign key (realm_id, subscription_id) references webhook_subscriptions (realm_id, id) on delete cascade
);

create function webhook_subscription_state_log() returns trigger language plpgsql as $$
begin
  -- A subscription removed again before the commit leaves nothing to log.
  insert into webhook_subscription_states (realm_id, subscription_id, state)
  select new.realm_id, new.id, new.state
   where exists (select 1 from webhook_subscriptions where realm_id = new.realm_id and id = new.id);
  return null;
end
$$;

-- Deferred: the row and its snapshot are written as the transaction commits.
create constraint trigger webhook_subscription_state_insert after insert on webhook_subscriptions
  deferrable initially deferred
  for each row execute function webhook_subscription_state_log();
create constraint trigger webhook_subscription_state_update after update of state on webhook_subscriptions
  deferrable initially deferred
  for each row when (old.state is distinct from new.state) execute function webhook_subscription_state_log();

-- Subscriptions that exist now start their log with the state they have.
insert into webhook_subscription_states (realm_id, subscription_id, state)
select realm_id, id, state from webhook_subscriptions;
