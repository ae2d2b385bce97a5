-- User import (spec doc 2, Migration adapters and Data lifecycle 1; docs/migration.md).

-- Administrator metadata of an account (doc 2, Limits: metadata 16 KiB); imports keep the source
-- system's attributes under admin_metadata.migration.
alter table users add column admin_metadata jsonb not null default '{}';

-- Where an imported account came from: (source_system, source_id). source_key is the SHA-256 of
-- the source id and is what imports look up. Erasing the account clears source_id and sets
-- erased_at but keeps the row, so a later import of the same source account reports it
-- skipped_deleted instead of creating it again.
create table user_external_ids (
  realm_id text not null,
  source_system text not null,
  source_key text not null,
  source_id text,
  user_id text not null,
  created_at timestamptz not null,
  erased_at timestamptz,
  primary key (realm_id, source_system, source_key),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create index user_external_ids_user on user_external_ids (realm_id, user_id);

-- TOTP parameters of authenticators imported from other systems; enrolled ones use the defaults.
alter table totp_credentials add column digits integer not null default 6 check (digits between 6 and 8);
alter table totp_credentials add column period_seconds integer not null default 30
  check (period_seconds between 10 and 120);
alter table totp_credentials add column algorithm text not null default 'SHA1'
  check (algorithm in ('SHA1', 'SHA256', 'SHA512'));

-- Audit history carried over from another system: kept apart from the service's own evidence (not
-- sealed, not in audit exports) and deleted by its retention, counted from imported_at.
create table imported_audit_events (
  realm_id text not null,
  id text not null,
  user_id text not null,
  source_system text not null,
  event_type text not null,
  occurred_at timestamptz not null,
  outcome text not null check (outcome in ('success', 'failure')),
  data jsonb not null default '{}',
  imported_at timestamptz not null,
  job_id text not null,
  primary key (realm_id, id)
);
create index imported_audit_events_user on imported_audit_events (realm_id, user_id, occurred_at desc, id desc);
create index imported_audit_events_realm on imported_audit_events (realm_id, occurred_at desc, id desc);
create index imported_audit_events_age on imported_audit_events (imported_at);

-- One row per user.import job: the request document sealed under the root key until the job ran
-- (it carries password verifiers and TOTP seeds), then the per-record report.
create table user_imports (
  realm_id text not null,
  job_id text not null,
  document_sealed text,
  report jsonb,
  created_at timestamptz not null,
  finished_at timestamptz,
  primary key (realm_id, job_id)
);
create index user_imports_age on user_imports (created_at);
