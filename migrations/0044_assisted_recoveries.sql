-- Assisted recovery requests (document 1 "Assisted recovery request" and its state table; the
-- recovery endpoints; document 2, Data lifecycle 4: the records are kept without cleanup). One row
-- per request, immediate or cooling-off; the worker task recovery.assisted_due moves due rows.
-- The setup link's token is stored as a digest only, single use, with its own expiry.
create table assisted_recoveries (
  realm_id text not null,
  id text not null,
  user_id text not null,
  status text not null check (status in ('scheduled', 'approved', 'executed', 'cancelled', 'expired')),
  mode text not null check (mode in ('immediate', 'cooling_off')),
  reason text,
  evidence_reference text,
  reset_mfa boolean not null,
  approval_required boolean not null,
  requested_by_type text not null,
  requested_by_id text not null,
  approved_by_type text,
  approved_by_id text,
  approved_at timestamptz,
  cancelled_by_type text,
  cancelled_by_id text,
  cancel_reason text,
  cancelled_at timestamptz,
  effective_at timestamptz not null,
  expires_at timestamptz not null,
  executed_at timestamptz,
  setup_token_digest text,
  setup_expires_at timestamptz,
  setup_used_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create index assisted_recoveries_user on assisted_recoveries (realm_id, user_id, created_at);
-- The due task's scan: open requests by when they become due.
create index assisted_recoveries_open on assisted_recoveries (effective_at)
  where status in ('scheduled', 'approved');
create unique index assisted_recoveries_setup on assisted_recoveries (realm_id, setup_token_digest)
  where setup_token_digest is not null;
