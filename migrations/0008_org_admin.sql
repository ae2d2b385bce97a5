-- Background jobs (spec doc 2, Job: id prefix job_, state, result, progress, last_error; job types
-- such as organization.delete). Only the rows exist so far: the organization deletion request
-- queues one; the jobs worker that runs them comes later.
create table jobs (
  realm_id text not null references realms (id),
  id text not null,
  type text not null,
  state text not null check (state in ('queued', 'running', 'succeeded', 'failed', 'dead_letter', 'cancelled')),
  organization_id text,
  requested_by_type text not null,
  requested_by_id text,
  -- Non-secret outcome (counts, checksums); erased when the organization it belongs to is deleted.
  result jsonb,
  last_error text,
  progress jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id)
);
create index jobs_organization on jobs (realm_id, organization_id) where organization_id is not null;
-- doc 2, Organization deletion: at most one deletion job per organization is queued or running.
create unique index jobs_one_live_org_deletion on jobs (realm_id, organization_id)
  where type = 'organization.delete' and state in ('queued', 'running');

-- Administrative listings of one organization's requests by state.
create index membership_requests_org_state on membership_requests (realm_id, organization_id, kind, state, id);
-- The membership sweep finds pending requests per kind past their expiry.
create index memberships_org_state on memberships (realm_id, organization_id, state, id);
create index role_assignments_membership on role_assignments (realm_id, membership_id) where membership_id is not null;
