-- Self-service registration held for approval, terms acceptances, and the grace period of a
-- self-service deletion request.

-- One row per registration held for an administrator (registration.mode approval). Kept without
-- cleanup (spec doc 2, Data lifecycle 4).
create table registration_approvals (
  realm_id text not null,
  user_id text not null,
  state text not null check (state in ('pending', 'approved', 'denied')),
  created_at timestamptz not null,
  decided_at timestamptz,
  decided_by text,
  primary key (realm_id, user_id)
);
create index registration_approvals_pending on registration_approvals (realm_id, created_at) where state = 'pending';

-- Every accepted terms version, kept (spec doc 2, Data lifecycle 4).
create table terms_acceptances (
  realm_id text not null,
  user_id text not null,
  version text not null,
  accepted_at timestamptz not null,
  primary key (realm_id, user_id, version)
);

-- When a pending_deletion account is erased by the worker unless the deletion is cancelled.
alter table users add column deletion_due_at timestamptz;
create index users_deletion_due on users (deletion_due_at) where state = 'pending_deletion';

-- Profile attributes the realm's policy names (profile.attributes); complete_profile fills the
-- required ones.
alter table users add column attributes jsonb not null default '{}';
