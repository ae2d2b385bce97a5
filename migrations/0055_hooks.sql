-- Synchronous hooks (docs/hooks.md): endpoints of a realm called while a registration, a token
-- issuance or a sign-in happens, signed as webhooks are. The fields are those of the realm export's
-- hook line (document 2, Realm data export); the signing secret is sealed under the root key
-- (purpose hook-secret, bound to realm and id) and never exported. Calls are not stored.
create table hooks (
  realm_id text not null references realms (id),
  id text not null,
  name text not null,
  kind text not null check (kind in ('before_registration', 'before_token_issuance', 'after_sign_in')),
  url text not null,
  timeout_ms integer not null check (timeout_ms between 100 and 5000),
  failure_mode text not null check (failure_mode in ('fail_open', 'fail_closed')),
  -- Empty: every client of the realm.
  client_ids text[] not null default '{}',
  allow_private_network boolean not null default false,
  state text not null default 'active' check (state in ('active', 'disabled')),
  owner_user_id text,
  secret_sealed text not null,
  -- The secret before the last rotation signs too until this time (24 hours).
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id)
);
create index hooks_active on hooks (realm_id, kind) where state = 'active';

-- The kinds that have at least one active hook in the realm, kept by every change of hooks in its
-- transaction (under a lock of the realm row). The realm row is read for every request anyway, so
-- a realm without hooks pays no statement for them at its hook points.
alter table realms add column hook_kinds text[] not null default '{}';
