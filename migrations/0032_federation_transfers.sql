-- Federation transfers (spec doc 1, "Federation transfer" and its endpoints; Limits; doc 2, Data
-- lifecycle 3): a reviewed move of linked identities from one connection to another. The transfer
-- row is the record of who asked, who approved and what moved; its entries are deleted 180 days
-- after it was applied or cancelled (docs/federation.md, Federation transfers).
create table federation_transfers (
  realm_id text not null references realms (id),
  id text not null,
  source_provider_id text not null,
  target_provider_id text not null,
  mode text not null check (mode in ('map', 'same_subject')),
  target_tenant text,
  reason text not null,
  state text not null check (state in ('draft', 'approved', 'applied', 'cancelled')),
  -- Counts per entry outcome as of the last analysis, with total.
  summary jsonb not null default '{}',
  created_by_type text not null,
  created_by_id text,
  approved_by_type text,
  approved_by_id text,
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  approved_at timestamptz,
  applied_at timestamptz,
  cancelled_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, source_provider_id) references identity_providers (realm_id, id),
  foreign key (realm_id, target_provider_id) references identity_providers (realm_id, id),
  check (source_provider_id <> target_provider_id)
);
create index federation_transfers_ended on federation_transfers (coalesce(applied_at, cancelled_at))
  where state in ('applied', 'cancelled');

-- One requested move. seq orders the entries and pages them; link_id is the source link the last
-- analysis found (a link id, never an account id).
create table federation_transfer_entries (
  realm_id text not null,
  transfer_id text not null,
  seq integer not null,
  source_subject text not null,
  source_issuer text,
  target_subject text not null,
  target_tenant text,
  outcome text not null check (outcome in ('ready', 'already_linked', 'missing_source', 'ambiguous_source',
    'duplicate_source', 'duplicate_target', 'collision_target', 'collision_user', 'target_tenant_required',
    'applied')),
  link_id text,
  target_issuer text,
  primary key (realm_id, transfer_id, seq),
  foreign key (realm_id, transfer_id) references federation_transfers (realm_id, id) on delete cascade
);
create index federation_transfer_entries_outcome on federation_transfer_entries (realm_id, transfer_id, outcome, seq);
