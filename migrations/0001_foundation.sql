-- Foundation schema: realms and their policy revisions, signing keys, the accounts and roles the
-- first administrator needs, the built-in CLI client, and the cross-cutting audit and outbox
-- tables every later use case writes to in its own transaction.
-- Every realm-scoped table leads its primary and unique keys with realm_id (ARCHITECTURE.md).

create table realms (
  id text primary key,
  name text not null,
  display_name text not null,
  state text not null check (state in ('active', 'suspended')),
  policy_revision integer not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index realms_name_key on realms (name);

create table realm_policy_revisions (
  realm_id text not null references realms (id),
  revision integer not null check (revision >= 1),
  policy jsonb not null,
  reason text not null,
  created_by text,
  created_at timestamptz not null default now(),
  primary key (realm_id, revision)
);

create table signing_keys (
  realm_id text not null references realms (id),
  kid text not null,
  algorithm text not null check (algorithm in ('RS256', 'PS256', 'ES256', 'EdDSA')),
  state text not null check (state in ('pending', 'active', 'retiring', 'retired', 'compromised')),
  public_jwk jsonb not null,
  private_key_sealed text not null,
  root_key_version integer not null,
  created_at timestamptz not null default now(),
  activated_at timestamptz,
  retiring_at timestamptz,
  publish_until timestamptz,
  retired_at timestamptz,
  compromised_at timestamptz,
  primary key (realm_id, kid)
);
-- Exactly one active key per realm (spec doc 2, Signing key states).
create unique index signing_keys_one_active on signing_keys (realm_id) where state = 'active';
-- At most one planned rotation waits at a time.
create unique index signing_keys_one_pending on signing_keys (realm_id) where state = 'pending';

create table users (
  realm_id text not null references realms (id),
  id text not null,
  state text not null check (state in ('active', 'pending_verification', 'suspended', 'locked',
    'recovery_restricted', 'pending_deletion', 'deleted')),
  display_name text,
  protected boolean not null default false,
  is_guest boolean not null default false,
  required_actions text[] not null default '{}',
  created_via text not null,
  last_login_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (realm_id, id)
);

create table user_identifiers (
  realm_id text not null,
  id text not null,
  user_id text not null,
  type text not null check (type in ('email', 'username', 'phone')),
  value text not null,
  -- lower-cased for email and username so look-ups are case-insensitive without citext
  value_key text not null,
  verified boolean not null default false,
  verified_at timestamptz,
  is_primary boolean not null default false,
  created_at timestamptz not null default now(),
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create unique index user_identifiers_value_key on user_identifiers (realm_id, type, value_key);
create index user_identifiers_user on user_identifiers (realm_id, user_id);

create table password_credentials (
  realm_id text not null,
  user_id text not null,
  hash text not null,
  pepper_version integer,
  compromised boolean not null default false,
  created_at timestamptz not null default now(),
  primary key (realm_id, user_id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);

create table roles (
  realm_id text not null references realms (id),
  id text not null,
  name text not null,
  description text not null default '',
  builtin boolean not null default false,
  permissions text[] not null default '{}',
  created_at timestamptz not null default now(),
  primary key (realm_id, id)
);
create unique index roles_name_key on roles (realm_id, lower(name));

create table role_assignments (
  realm_id text not null,
  id text not null,
  role_id text not null,
  subject_type text not null check (subject_type in ('user', 'service_principal', 'group')),
  subject_id text not null,
  scope_type text not null check (scope_type in ('realm', 'organization', 'project')),
  scope_id text not null default '',
  source text not null,
  reason text,
  created_at timestamptz not null default now(),
  primary key (realm_id, id),
  foreign key (realm_id, role_id) references roles (realm_id, id)
);
create unique index role_assignments_key
  on role_assignments (realm_id, role_id, subject_type, subject_id, scope_type, scope_id);
create index role_assignments_subject on role_assignments (realm_id, subject_type, subject_id);

create table clients (
  realm_id text not null references realms (id),
  id text not null,
  client_id text not null,
  name text not null,
  type text not null check (type in ('web', 'spa', 'native', 'device', 'service')),
  builtin boolean not null default false,
  state text not null check (state in ('active', 'disabled')),
  redirect_uris text[] not null default '{}',
  allowed_origins text[] not null default '{}',
  grant_types text[] not null default '{}',
  token_endpoint_auth_method text not null,
  consent_mode text not null default 'implicit',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (realm_id, id)
);
create unique index clients_client_id_key on clients (realm_id, client_id);

-- Audit evidence. realm_id is null only for deployment-wide operator events.
create table audit_events (
  id text primary key,
  realm_id text,
  occurred_at timestamptz not null,
  type text not null,
  category text not null,
  outcome text not null check (outcome in ('success', 'failure')),
  actor_type text not null,
  actor_id text,
  subject_type text,
  subject_id text,
  target_type text,
  target_id text,
  org_id text,
  correlation_id text,
  signal text,
  reason text,
  data jsonb not null default '{}'
);
create index audit_events_realm_time on audit_events (realm_id, occurred_at desc, id desc);

-- Transactional outbox (spec doc 2, Events): written with the change, delivered by the worker.
create table outbox (
  realm_id text not null,
  id text not null,
  event_type text not null,
  event_version integer not null default 1,
  occurred_at timestamptz not null,
  org_id text,
  correlation_id text,
  data jsonb not null,
  dispatched_at timestamptz,
  primary key (realm_id, id)
);
create index outbox_pending on outbox (occurred_at) where dispatched_at is null;

-- Worker leases: one holder per periodic task at a time across every worker process.
create table worker_leases (
  name text primary key,
  holder text not null,
  locked_until timestamptz not null
);
