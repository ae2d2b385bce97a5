-- Lifecycle workflows (docs/workflows.md): a realm's definitions of what happens to an account when
-- an event about it is written or a date of its comes due, and the runs that do it (document 2,
-- Limits, "Lifecycle workflows": 1..5 triggers, 1..20 steps, 64 KiB, 500 runs a schedule firing,
-- 20 workflows a pass, chain depth 3). Definitions are kept without clean-up (document 2, Data
-- lifecycle 4): a deleted workflow keeps its row with deleted_at set, and its runs.
create table workflows (
  realm_id text not null references realms (id),
  id text not null,
  name text not null,
  description text,
  enabled boolean not null,
  -- the triggers and steps as written (compact JSON at most 64 KiB with the rest of the body)
  triggers jsonb not null,
  steps jsonb not null,
  -- the event types of its event triggers, so the outbox dispatch finds the workflows an event starts
  event_types text[] not null,
  revision integer not null,
  -- whose authority the steps use: the last administrator who wrote the definition
  run_as_type text not null,
  run_as_id text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  deleted_at timestamptz,
  primary key (realm_id, id)
);
create unique index workflows_live_name on workflows (realm_id, name) where deleted_at is null;

-- When each schedule trigger fires next, and since when it looks at accounts' dates.
create table workflow_schedules (
  realm_id text not null,
  workflow_id text not null,
  trigger_index integer not null,
  next_at timestamptz not null,
  since timestamptz not null,
  primary key (realm_id, workflow_id, trigger_index),
  foreign key (realm_id, workflow_id) references workflows (realm_id, id)
);
create index workflow_schedules_due on workflow_schedules (next_at);

-- One run of a workflow for one account. steps is the definition's steps when the run started;
-- next_step the index of the step to do next; outcomes one entry per step done. depth counts the
-- runs of a chain (1 for a run no workflow caused); a run past the chain limit is recorded as
-- skipped. anchor is the account date a schedule trigger fired on, so one date starts one run.
create table workflow_runs (
  realm_id text not null,
  id text not null,
  workflow_id text not null,
  revision integer not null,
  user_id text not null,
  trigger_type text not null check (trigger_type in ('event', 'schedule')),
  trigger_index integer not null,
  source_event_id text,
  anchor timestamptz,
  depth integer not null check (depth between 1 and 4),
  state text not null check (state in ('pending', 'waiting', 'succeeded', 'failed', 'skipped', 'cancelled')),
  steps jsonb not null,
  next_step integer not null default 0,
  due_at timestamptz,
  outcomes jsonb not null default '[]',
  error text,
  created_at timestamptz not null,
  ended_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, workflow_id) references workflows (realm_id, id)
);
create index workflow_runs_due on workflow_runs (due_at) where state in ('pending', 'waiting');
create index workflow_runs_of_workflow on workflow_runs (realm_id, workflow_id, id);
create unique index workflow_runs_scheduled_once on workflow_runs (realm_id, workflow_id, trigger_index, user_id, anchor)
  where trigger_type = 'schedule';

-- The events a run's steps wrote, with the run's chain depth: the outbox dispatch reads (and
-- deletes) them to tell how deep a run those events start would be. Taken from the step's own
-- transaction, not from the events' correlation id, which a request can choose.
create table workflow_run_events (
  realm_id text not null,
  event_id text not null,
  run_id text not null,
  depth integer not null,
  primary key (realm_id, event_id)
);
