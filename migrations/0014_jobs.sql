-- The jobs runner (spec doc 2, Job record, Job states, Jobs and exports): leases so one worker
-- runs a job at a time and a crashed worker's job is taken over, retries, the requester's
-- permission for the re-checks, Idempotency-Key replays, the encrypted result with its download
-- metadata and purge time, and single-use download tokens stored as digests.

alter table jobs add column permission text;
alter table jobs add column params jsonb not null default '{}';
alter table jobs add column attempts integer not null default 0;
-- Not claimed before this time (retry backoff); queued jobs are claimed oldest first.
alter table jobs add column available_at timestamptz;
update jobs set available_at = created_at where available_at is null;
alter table jobs alter column available_at set not null;
alter table jobs add column locked_by text;
alter table jobs add column locked_until timestamptz;
alter table jobs add column started_at timestamptz;
alter table jobs add column finished_at timestamptz;
-- Idempotency-Key of the creating request, per requester; fingerprint of what was asked.
alter table jobs add column idempotency_key text;
alter table jobs add column request_fingerprint text;
-- The result file, sealed under the root key (purpose job-result), and when it is purged.
alter table jobs add column result_sealed text;
alter table jobs add column result_expires_at timestamptz;

create unique index jobs_idempotency on jobs (realm_id, requested_by_type, requested_by_id, idempotency_key)
  where idempotency_key is not null;
-- The claim: due queued jobs, and running ones whose lease ran out.
create index jobs_queued on jobs (available_at) where state = 'queued';
create index jobs_running on jobs (locked_until) where state = 'running';
-- The purge of results past privacy.export_retention.
create index jobs_result_expiry on jobs (result_expires_at) where result_sealed is not null;

create table job_download_tokens (
  realm_id text not null,
  token_digest text not null,
  job_id text not null,
  requester_type text not null,
  requester_id text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  primary key (realm_id, token_digest),
  foreign key (realm_id, job_id) references jobs (realm_id, id)
);
create index job_download_tokens_expiry on job_download_tokens (expires_at);
