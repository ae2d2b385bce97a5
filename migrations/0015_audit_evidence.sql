-- Audit evidence (spec doc 2, Audit records, Audit endpoints, Data lifecycle 1): events sealed in
-- batches linked by a hash chain, legal holds, corrections that point at the event they correct,
-- and the bookkeeping of retention and the write-once archive.

-- Set when the event is sealed: its content hash and the batch that holds it.
alter table audit_events add column content_hash text;
alter table audit_events add column batch_id text;
-- A correction is a new event naming the event it corrects; events are never edited.
alter table audit_events add column corrects_event_id text;
create index audit_events_unsealed on audit_events (occurred_at, id) where batch_id is null;
create index audit_events_batch on audit_events (batch_id, occurred_at, id);
create index audit_events_realm_id on audit_events (realm_id, id desc);

-- One row per sealed batch, in chain order. A batch row outlives its events: retention deletes
-- events, never batches, so the chain stays verifiable after pruning.
create table audit_batches (
  id text primary key,
  seq bigint not null unique,
  sealed_at timestamptz not null,
  first_occurred_at timestamptz not null,
  last_occurred_at timestamptz not null,
  event_count integer not null,
  -- SHA-256 over the content hashes of the batch's events, in (occurred_at, id) order.
  events_hash text not null,
  -- The batch_hash of seq - 1; null for the first batch.
  previous_hash text,
  batch_hash text not null,
  -- Events of this batch deleted by retention so far.
  pruned_count integer not null default 0,
  -- The archive file was written (privacy.audit_archive_dir).
  archived_at timestamptz,
  -- Retention last looked at this batch (rotates the batches it checks).
  retention_checked_at timestamptz
);
create index audit_batches_unarchived on audit_batches (seq) where archived_at is null;
create index audit_batches_retention on audit_batches (retention_checked_at nulls first, seq)
  where pruned_count < event_count;

create table audit_legal_holds (
  realm_id text not null,
  id text not null,
  organization_id text,
  subject_id text,
  reason text not null,
  created_by_id text,
  created_at timestamptz not null,
  released_by_id text,
  released_at timestamptz,
  primary key (realm_id, id)
);
create index audit_legal_holds_active on audit_legal_holds (realm_id) where released_at is null;
